import Foundation
import KeychainConcurrency
import KeychainCore
import Logging

/// `ItemStore` over SQLite: one row per item in `items`, attributes in typed columns (searchable
/// metadata, stored in clear), the secret sealed with the keyring (AES-256-GCM, bound to the
/// item's class, persistent reference and access group). Uniqueness is enforced by the
/// database (a partial UNIQUE index per class over the primary key with Apple's defaults), so
/// two concurrent adds cannot both succeed. Semantics are those of `InMemoryItemStore`.
public final class SQLiteItemStore: ItemStore {
    let pool: ConnectionPool
    let keyring: Keyring
    private let logger: Logger
    /// One find cache per request thread: a shared one cost every hit a contended lock and cache
    /// misses on the rows' reference counts (docs/benchmarks.md, "Token fetch: session 9").
    private let recentFinds = PerThread { FindCache() }
    /// Each row under its lookup attributes, so that a point read walks one B-tree, not two.
    let lookups = ItemLookupMap()

    /// Builds the lookup map before returning when the vault has at most `inlineLookupBuild` rows,
    /// else on a background thread (finds use the lookup index until it is done).
    init(pool: ConnectionPool, keyring: Keyring, logger: Logger, inlineLookupBuild: Int64 = 20_000) {
        self.pool = pool
        self.keyring = keyring
        self.logger = logger
        buildLookupMap(inlineUpTo: inlineLookupBuild)
    }

    /// The attribute columns of one stored class and the SQL naming them. A row holds only its
    /// class's attributes (the service refuses any other), so an add writes and a find selects
    /// and decodes only those: 16 of the 47 columns for a generic password.
    struct ClassColumns {
        /// In catalogue order.
        let attributes: [Attribute]
        /// The attribute columns, comma-separated.
        private let names: String
        let insertSQL: String

        init(_ itemClass: ItemClass) {
            attributes = Attribute.attributes(of: itemClass)
            names = attributes.map(Schema.column).joined(separator: ", ")
            insertSQL =
                "INSERT INTO items (class, persistent_ref, \(names), secret) VALUES (?, ?"
                + String(repeating: ", ?", count: attributes.count) + ", ?)"
        }

        /// What a find reading `contents` selects: `seq, class, persistent_ref`, then the
        /// attribute columns, or without them the access group the secret is sealed to, then the
        /// secret.
        func selectList(_ contents: ItemContents) -> String {
            var list = "seq, class, persistent_ref"
            if contents.contains(.attributes) {
                list += ", \(names)"
            } else if contents.contains(.secret) {
                list += ", \(Schema.effective(.accessGroup))"
            }
            if contents.contains(.secret) { list += ", secret" }
            return list
        }

        /// The column of the secret in `selectList(contents)`.
        func secretColumn(_ contents: ItemContents) -> Int32 {
            SQLiteItemStore.firstAttributeColumn + Int32(contents.contains(.attributes) ? attributes.count : 1)
        }
    }

    static let columnsByClass = Dictionary(uniqueKeysWithValues: ItemClass.storedClasses.map { ($0, ClassColumns($0)) })
    static let firstAttributeColumn: Int32 = 3
    private static let classesByCode = Dictionary(uniqueKeysWithValues: ItemClass.storedClasses.map { ($0.code, $0) })

    // MARK: ItemStore

    public func add(_ items: [Item]) throws {
        guard !items.isEmpty else { return }
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                try keyring.prepareForSealing(items.count { $0.secret != nil }, on: db)
                try db.transaction {
                    for item in items { try insert(item, on: db) }
                }
            }
        } }
    }

    /// Inserts one item, its secret sealed, and lists it in the lookup map; call inside a write
    /// transaction on `db`.
    @discardableResult
    private func insert(_ item: Item, on db: SQLiteConnection) throws -> ItemLookupMap.Entry {
        let columns = Self.columnsByClass[item.itemClass]!
        var values: [SQLiteValue] = [.text(item.itemClass.code), .text(item.persistentRef.rawValue)]
        values.reserveCapacity(columns.attributes.count + 3)
        for attribute in columns.attributes {
            values.append(item.attributes[attribute].map(Self.sqlValue) ?? .null)
        }
        if let secret = item.secret {
            values.append(.blob(try keyring.seal(secret, binding: Self.binding(of: item), on: db)))
        } else {
            values.append(.null)
        }
        try db.execute(columns.insertSQL, values)
        let lookupValues = Schema.leadingLookup(of: item.itemClass).map { item.attributes[$0].map(Self.sqlValue) ?? .null }
        let entry = ItemLookupMap.Entry(key: ItemLookupMap.Key(item.itemClass, lookupValues), seq: db.lastInsertedRow)
        lookups.add(entry.key, seq: entry.seq)
        return entry
    }

    public func replace(deleting filters: [ItemFilter], adding items: [Item]) throws -> Int {
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                try keyring.prepareForSealing(items.count { $0.secret != nil }, on: db)
                let (deleted, added) = try db.transaction {
                    var deleted: [ItemLookupMap.Entry] = []
                    for filter in filters { deleted += try deleteRows(filter, on: db) }
                    return (deleted, try items.map { try insert($0, on: db) })
                }
                // An added row can take the `seq` of a deleted one (SQLite numbers a row after the
                // largest left): listed under the same key, it stays.
                let kept = Set(added)
                lookups.remove(deleted.filter { !kept.contains($0) })
                return deleted.count
            }
        } }
    }

    public func find(_ filter: ItemFilter, limit: Int?, after cursor: ItemCursor?, reading contents: ItemContents) throws
        -> ItemPage
    {
        try StoreErrors.map { try keyring.withKeys {
            let key = FindCache.Key(filter: filter, limit: limit, after: cursor, contents: contents)
            let rows = try recentFinds.current.rows(for: key, generation: { pool.writeGeneration }) {
                try pool.read { db in
                    if let lookupKey = Self.lookupKey(of: filter), let candidates = lookups.candidates(for: lookupKey) {
                        return try selectRows(key, at: candidates, on: db)
                    }
                    return try selectRows(key, on: db)
                }
            }
            var page = rows
            var next: ItemCursor?
            if let limit, rows.count > max(0, limit) {
                page = Array(rows.prefix(max(0, limit)))
                next = page.last.map { ItemCursor(afterSequence: $0.seq) }
            }
            let items = try page.map { row -> Item in
                var item = row.item
                if let box = row.sealedSecret {
                    let binding = SealBinding(itemClass: item.itemClass, persistentRef: item.persistentRef, accessGroup: row.accessGroup)
                    item.secret = try keyring.open(box, binding: binding)
                }
                return item
            }
            return ItemPage(items: items, next: next)
        } }
    }

    /// The rows a find selects, secrets still sealed, one more than `limit` (to know whether a
    /// next page exists), through the lookup index.
    private func selectRows(_ key: FindCache.Key, on db: SQLiteConnection) throws -> [FindCache.Row] {
        let shape = FindShape(key)
        let reader = RowReader(key)
        return try db.query(shape, shape.values(of: key), row: reader.row)
    }

    /// The same rows read by `seq` from the lookup map's `candidates` (ascending): those after the
    /// cursor that match the filter, up to one more than `limit`.
    private func selectRows(_ key: FindCache.Key, at candidates: [Int64], on db: SQLiteConnection) throws
        -> [FindCache.Row]
    {
        let shape = FindShape(key, atSequence: true)
        let reader = RowReader(key)
        let wanted = key.limit.map { max(0, $0) + 1 } ?? .max
        let after = key.after?.afterSequence ?? 0
        var rows: [FindCache.Row] = []
        for seq in candidates where seq > after {
            guard rows.count < wanted else { break }
            rows += try db.query(shape, shape.values(of: key, at: seq), row: reader.row)
        }
        return rows
    }

    /// Makes a find's rows from the columns its `FindShape` selects.
    private struct RowReader {
        let decoded: [Attribute]
        let readsAttributes: Bool
        let readsSecret: Bool
        let secretColumn: Int32

        init(_ key: FindCache.Key) {
            let columns = SQLiteItemStore.columnsByClass[key.filter.itemClass]!
            readsAttributes = key.contents.contains(.attributes)
            readsSecret = key.contents.contains(.secret)
            decoded = readsAttributes ? columns.attributes : []
            secretColumn = columns.secretColumn(key.contents)
        }

        func row(_ row: SQLiteStatement) throws -> FindCache.Row {
            FindCache.Row(
                seq: row.int64(0), item: try SQLiteItemStore.item(from: row, columns: decoded),
                sealedSecret: readsSecret && !row.isNull(secretColumn) ? row.blob(secretColumn) : nil,
                accessGroup: readsSecret && !readsAttributes ? row.text(SQLiteItemStore.firstAttributeColumn) : nil)
        }
    }

    /// The deleted rows' lookup keys and `seq`s, for `lookups.remove` once the transaction commits.
    private func deleteRows(_ filter: ItemFilter, on db: SQLiteConnection) throws -> [ItemLookupMap.Entry] {
        let (whereClause, values) = Self.whereClause(filter)
        let lead = Schema.leadingLookup(of: filter.itemClass)
        let returning = (["seq"] + lead.map(Schema.column)).joined(separator: ", ")
        return try db.query("DELETE FROM items WHERE \(whereClause) RETURNING \(returning)", values) { row in
            ItemLookupMap.Entry(key: ItemLookupMap.Key(filter.itemClass, lead.indices.map { row.value(Int32($0) + 1) }), seq: row.int64(0))
        }
    }

    public func update(_ filter: ItemFilter, with changes: ItemChanges) throws -> Int {
        try StoreErrors.map { try keyring.withKeys {
            let (whereClause, whereValues) = Self.whereClause(filter)
            // The group the secrets will be bound to after the update (as `Item.accessGroup` reads it).
            let newGroup: String? = changes.attributes[.accessGroup].map { value in
                if case .string(let group)? = value { return group }
                return ""
            }
            let changedAttributes = Self.columnsByClass[filter.itemClass]!.attributes.filter {
                changes.attributes.keys.contains($0) && $0 != .modificationDate
            }
            let lead = Schema.leadingLookup(of: filter.itemClass)
            let rekeys = lead.contains { changes.attributes.keys.contains($0) }
            return try pool.write { db in
                try keyring.prepareForSealing(changes.secret != nil ? 1 : 0, on: db)
                let (count, rekeyed) = try db.transaction {
                    let rows = try db.query(
                        "SELECT seq, persistent_ref, ifnull(\"accessGroup\", ''), \"modificationDate\", secret, "
                            + lead.map(Schema.column).joined(separator: ", ") + " FROM items WHERE \(whereClause)",
                        whereValues
                    ) { row in
                        (
                            seq: row.int64(0), ref: row.text(1), group: row.text(2),
                            modified: row.isNull(3) ? nil : row.int64(3), secret: row.isNull(4) ? nil : row.blob(4),
                            lookupValues: lead.indices.map { row.value(Int32($0) + 5) }
                        )
                    }
                    // Rows whose lookup attributes change: listed under the new key now, removed
                    // from under the old one once the update has committed.
                    var rekeyed: [ItemLookupMap.Entry] = []
                    for row in rows {
                        if rekeys {
                            let newValues = zip(lead, row.lookupValues).map { attribute, old in
                                changes.attributes[attribute].map { $0.map(Self.sqlValue) ?? .null } ?? old
                            }
                            let oldKey = ItemLookupMap.Key(filter.itemClass, row.lookupValues)
                            let newKey = ItemLookupMap.Key(filter.itemClass, newValues)
                            if newKey != oldKey {
                                lookups.add(newKey, seq: row.seq)
                                rekeyed.append(ItemLookupMap.Entry(key: oldKey, seq: row.seq))
                            }
                        }
                        guard let ref = PersistentRef(row.ref) else { throw KeychainError.decode("bad persistent reference") }
                        var assignments: [String] = []
                        var values: [SQLiteValue] = []
                        for attribute in changedAttributes {
                            assignments.append("\(Schema.column(attribute)) = ?")
                            values.append(changes.attributes[attribute]!.map(Self.sqlValue) ?? .null)
                        }
                        // Strictly later than the previous modification date.
                        var millis = changes.modificationDate.millisecondsSince1970
                        if let old = row.modified, millis <= old { millis = old + 1 }
                        assignments.append("\"modificationDate\" = ?")
                        values.append(.integer(millis))
                        let group = newGroup ?? row.group
                        let binding = SealBinding(itemClass: filter.itemClass, persistentRef: ref, accessGroup: group)
                        if let secret = changes.secret {
                            assignments.append("secret = ?")
                            values.append(.blob(try keyring.seal(secret, binding: binding, on: db)))
                        } else if group != row.group, let box = row.secret {
                            // The secret is bound to its group: re-seal it under the new binding.
                            let old = SealBinding(itemClass: filter.itemClass, persistentRef: ref, accessGroup: row.group)
                            let plaintext = try keyring.open(box, binding: old)
                            assignments.append("secret = ?")
                            values.append(.blob(try keyring.seal(plaintext, binding: binding, on: db)))
                        }
                        values.append(.integer(row.seq))
                        try db.execute("UPDATE items SET \(assignments.joined(separator: ", ")) WHERE seq = ?", values)
                    }
                    return (rows.count, rekeyed)
                }
                lookups.remove(rekeyed)
                return count
            }
        } }
    }

    /// Needs no key, but like every item operation it is refused while the vault is locked.
    public func delete(_ filter: ItemFilter) throws -> Int {
        try StoreErrors.map { try keyring.withKeys {
            try pool.write { db in
                let deleted = try db.transaction { try deleteRows(filter, on: db) }
                lookups.remove(deleted)
                return deleted.count
            }
        } }
    }

    /// Works while locked too (it reads no secret): metrics keep counting items.
    public func countByClass() throws -> [ItemClass: Int] {
        try StoreErrors.map {
            var counts: [ItemClass: Int] = [:]
            for itemClass in ItemClass.storedClasses { counts[itemClass] = 0 }
            let rows = try pool.read { db in
                try db.query("SELECT class, count(*) FROM items GROUP BY class") { ($0.text(0), Int($0.int64(1))) }
            }
            for (code, count) in rows {
                if let itemClass = Self.classesByCode[code] { counts[itemClass] = count }
            }
            return counts
        }
    }

    // MARK: Lookup map

    /// The lookup-map key of the items a filter can match, when it names all of its class's lookup
    /// attributes and compares them exactly (not case-insensitively); else nil.
    static func lookupKey(of filter: ItemFilter) -> ItemLookupMap.Key? {
        var values: [SQLiteValue] = []
        for attribute in Schema.leadingLookup(of: filter.itemClass) {
            guard let wanted = filter.equal[attribute] else { return nil }
            if filter.caseInsensitive, case .string = wanted { return nil }
            values.append(sqlValue(wanted))
        }
        return ItemLookupMap.Key(filter.itemClass, values)
    }

    /// The lookup attributes of every class, as the columns `lookupScanSQL` selects after `seq, class`.
    private static let lookupColumns: [Attribute] = ItemClass.storedClasses.reduce(into: []) { columns, itemClass in
        for attribute in Schema.leadingLookup(of: itemClass) where !columns.contains(attribute) { columns.append(attribute) }
    }

    private static let lookupScanSQL =
        "SELECT seq, class, \(lookupColumns.map(Schema.column).joined(separator: ", ")) FROM items WHERE seq > ? ORDER BY seq LIMIT ?"

    /// Rows one read of the build lists.
    static let lookupBuildChunk = 10_000

    private func buildLookupMap(inlineUpTo inlineLimit: Int64) {
        let lastRow: Int64
        do {
            lastRow = try pool.read { try $0.scalarInt("SELECT ifnull(max(seq), 0) FROM items") ?? 0 }
        } catch {
            logger.warning("the lookup map was not built; finds use the lookup index", metadata: ["error": "\(error)"])
            return
        }
        if lastRow <= inlineLimit { return fillLookupMap() }
        let thread = Thread { [self] in fillLookupMap() }
        thread.name = "keychaind-lookups"
        thread.start()
    }

    /// Lists every row, `lookupBuildChunk` rows per read (so that writes go on meanwhile: each lists
    /// its own rows), then marks the map complete.
    private func fillLookupMap() {
        let started = ContinuousClock.now
        var after: Int64 = 0
        do {
            while true {
                let rows = try pool.read { db in
                    try db.query(Self.lookupScanSQL, [.integer(after), .integer(Int64(Self.lookupBuildChunk))]) {
                        row -> (seq: Int64, key: ItemLookupMap.Key?) in
                        guard let itemClass = Self.classesByCode[row.text(1)] else { return (row.int64(0), nil) }
                        let values = Schema.leadingLookup(of: itemClass).map { attribute in
                            row.value(2 + Int32(Self.lookupColumns.firstIndex(of: attribute)!))
                        }
                        return (row.int64(0), ItemLookupMap.Key(itemClass, values))
                    }
                }
                lookups.add(rows.compactMap { row in row.key.map { ItemLookupMap.Entry(key: $0, seq: row.seq) } })
                guard rows.count == Self.lookupBuildChunk, let last = rows.last else { break }
                after = last.seq
            }
        } catch is KeychainStoreClosed {
            return
        } catch {
            logger.warning("the lookup map was not built; finds use the lookup index", metadata: ["error": "\(error)"])
            return
        }
        lookups.markComplete()
        logger.notice(
            "lookup map ready",
            metadata: ["items": "\(lookups.count)", "ms": "\(Int((ContinuousClock.now - started) / .milliseconds(1)))"])
    }

    // MARK: SQL building

    /// The WHERE clause of a filter and the values to bind to it.
    static func whereClause(_ filter: ItemFilter) -> (String, [SQLiteValue]) {
        let shape = FilterShape(filter)
        return (shape.whereClause, shape.values(of: filter))
    }

    static func sqlValue(_ value: AttributeValue) -> SQLiteValue {
        switch value {
        case .string(let string): .text(string)
        case .data(let bytes): .blob(bytes)
        case .integer(let number): .integer(number)
        case .bool(let flag): .integer(flag ? 1 : 0)
        case .date(let date): .integer(date.millisecondsSince1970)
        }
    }

    /// The item of a row that selected `columns` (its class's) after `seq, class, persistent_ref`.
    static func item(from row: SQLiteStatement, columns: [Attribute]) throws -> Item {
        guard let itemClass = classesByCode[row.text(1)], let ref = PersistentRef(row.text(2)) else {
            throw KeychainError.decode("a stored item has an unknown class or a malformed persistent reference")
        }
        // Made at its size by the (inlined, specialized) initializer: `reserveCapacity` ran
        // unspecialized in the standard library and looked up type metadata (~1k instructions).
        var attributes = [Attribute: AttributeValue](minimumCapacity: columns.count)
        for (offset, attribute) in columns.enumerated() {
            let column = firstAttributeColumn + Int32(offset)
            if row.isNull(column) { continue }
            // Read each column as its attribute's type directly (this runs for every column of
            // every row read).
            switch attribute.valueType {
            case .string, .enumeration: attributes[attribute] = .string(row.text(column))
            case .data: attributes[attribute] = .data(row.blob(column))
            case .integer: attributes[attribute] = .integer(row.int64(column))
            case .bool: attributes[attribute] = .bool(row.int64(column) != 0)
            case .date: attributes[attribute] = .date(Date(millisecondsSince1970: row.int64(column)))
            }
        }
        return Item(itemClass: itemClass, persistentRef: ref, attributes: attributes, secret: nil)
    }

    static func binding(of item: Item) -> SealBinding {
        SealBinding(itemClass: item.itemClass, persistentRef: item.persistentRef, accessGroup: item.accessGroup)
    }
}
