import Foundation
import KeychainCore
import KeychainStore

/// The `items` table: one row per item, attributes in typed columns (searchable metadata, stored
/// in clear), the secret sealed (`secret`, a `SealedBox`). Every statement on it but the finds'
/// (`FindShape`) is written here; each runs on the connection it is given, inside the caller's
/// transaction when it writes.
enum ItemTable {
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
            names = attributes.map(ItemColumns.column).joined(separator: ", ")
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
            ItemTable.firstAttributeColumn + Int32(contents.contains(.attributes) ? attributes.count : 1)
        }
    }

    static let columnsByClass = Dictionary(uniqueKeysWithValues: ItemClass.storedClasses.map { ($0, ClassColumns($0)) })
    static let firstAttributeColumn: Int32 = 3

    // MARK: Writing

    /// Inserts `item` with its secret as `sealedSecret`; returns the row's `seq`.
    static func insert(_ item: Item, sealedSecret: [UInt8]?, on db: SQLiteConnection) throws -> Int64 {
        let columns = columnsByClass[item.itemClass]!
        var values: [SQLiteValue] = [.text(item.itemClass.code), .text(item.persistentRef.rawValue)]
        values.reserveCapacity(columns.attributes.count + 3)
        for attribute in columns.attributes {
            values.append(item.attributes[attribute].map(sqlValue) ?? .null)
        }
        values.append(sealedSecret.map(SQLiteValue.blob) ?? .null)
        try db.execute(columns.insertSQL, values)
        return db.lastInsertedRow
    }

    /// A row a delete removed.
    struct DeletedRow {
        /// Its lookup key and `seq`.
        let entry: ItemLookupMap.Entry
        let accessGroup: String
        /// The bytes of its sealed secret (0: none).
        let sealedBytes: Int
        /// Every attribute it stored, for the usage it frees.
        let attributes: [Attribute: AttributeValue]
    }

    /// Deletes the rows matching `filter`.
    static func delete(_ filter: ItemFilter, on db: SQLiteConnection) throws -> [DeletedRow] {
        let (whereClause, values) = whereClause(filter)
        let lead = ItemLookupMap.keyAttributes(of: filter.itemClass)
        let columns = columnsByClass[filter.itemClass]!.attributes
        let returning = (["seq", "ifnull(\"accessGroup\", '')", "ifnull(length(secret), 0)"] + (lead + columns).map(ItemColumns.column))
            .joined(separator: ", ")
        return try db.query("DELETE FROM items WHERE \(whereClause) RETURNING \(returning)", values) { row in
            DeletedRow(
                entry: ItemLookupMap.Entry(
                    key: ItemLookupMap.Key(filter.itemClass, lead.indices.map { row.value(Int32($0) + 3) }), seq: row.int64(0)),
                accessGroup: row.text(1), sealedBytes: Int(row.int64(2)),
                attributes: attributes(from: row, columns: columns, startingAt: Int32(3 + lead.count)))
        }
    }

    /// What an update needs of a row it changes.
    struct RowToUpdate {
        let seq: Int64
        let persistentRef: String
        /// The access group its secret is sealed to.
        let accessGroup: String
        let modificationDate: Int64?
        let sealedSecret: [UInt8]?
        /// Its lookup-map key attributes' values, in `ItemLookupMap.keyAttributes` order.
        let lookupValues: [SQLiteValue]
        /// Every attribute it stores.
        let attributes: [Attribute: AttributeValue]
    }

    static func rowsToUpdate(_ filter: ItemFilter, on db: SQLiteConnection) throws -> [RowToUpdate] {
        let (whereClause, values) = whereClause(filter)
        let lead = ItemLookupMap.keyAttributes(of: filter.itemClass)
        let columns = columnsByClass[filter.itemClass]!.attributes
        return try db.query(
            "SELECT seq, persistent_ref, ifnull(\"accessGroup\", ''), \"modificationDate\", secret, "
                + (lead + columns).map(ItemColumns.column).joined(separator: ", ") + " FROM items WHERE \(whereClause)",
            values
        ) { row in
            RowToUpdate(
                seq: row.int64(0), persistentRef: row.text(1), accessGroup: row.text(2),
                modificationDate: row.isNull(3) ? nil : row.int64(3), sealedSecret: row.isNull(4) ? nil : row.blob(4),
                lookupValues: lead.indices.map { row.value(Int32($0) + 5) },
                attributes: attributes(from: row, columns: columns, startingAt: Int32(5 + lead.count)))
        }
    }

    /// Sets the row `seq`'s `attributes` (nil: absent), its modification date and, when given, its
    /// sealed secret.
    static func update(
        _ seq: Int64, attributes: [(Attribute, AttributeValue?)], modificationDate: Int64, sealedSecret: [UInt8]?,
        on db: SQLiteConnection
    ) throws {
        var assignments: [String] = []
        var values: [SQLiteValue] = []
        for (attribute, value) in attributes {
            assignments.append("\(ItemColumns.column(attribute)) = ?")
            values.append(value.map(sqlValue) ?? .null)
        }
        assignments.append("\"modificationDate\" = ?")
        values.append(.integer(modificationDate))
        if let sealedSecret {
            assignments.append("secret = ?")
            values.append(.blob(sealedSecret))
        }
        values.append(.integer(seq))
        try db.execute("UPDATE items SET \(assignments.joined(separator: ", ")) WHERE seq = ?", values)
    }

    // MARK: Counting and scanning

    /// How many rows each stored class holds; reads no secret.
    static func countByClass(on db: SQLiteConnection) throws -> [ItemClass: Int] {
        var counts: [ItemClass: Int] = [:]
        for itemClass in ItemClass.storedClasses { counts[itemClass] = 0 }
        let rows = try db.query("SELECT class, count(*) FROM items GROUP BY class") { ($0.text(0), Int($0.int64(1))) }
        for (code, count) in rows {
            if let itemClass = ItemClass.storedByCode[code] { counts[itemClass] = count }
        }
        return counts
    }

    /// How many rows the table holds.
    static func count(on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM items") ?? 0)
    }

    /// The largest `seq` in the table, 0 when it is empty.
    static func lastSequence(on db: SQLiteConnection) throws -> Int64 {
        try db.scalarInt("SELECT ifnull(max(seq), 0) FROM items") ?? 0
    }

    /// The lookup-map key attributes of every class, as the columns `lookupScanSQL` selects after `seq, class`.
    private static let lookupColumns: [Attribute] = ItemClass.storedClasses.reduce(into: []) { columns, itemClass in
        for attribute in ItemLookupMap.keyAttributes(of: itemClass) where !columns.contains(attribute) {
            columns.append(attribute)
        }
    }

    private static let lookupScanSQL =
        "SELECT seq, class, \(lookupColumns.map(ItemColumns.column).joined(separator: ", ")) FROM items WHERE seq > ? ORDER BY seq LIMIT ?"

    /// Up to `limit` rows after `seq` in `seq` order, each with its lookup key (nil for a row of
    /// an unknown class).
    static func lookupKeys(after seq: Int64, limit: Int, on db: SQLiteConnection) throws
        -> [(seq: Int64, key: ItemLookupMap.Key?)]
    {
        try db.query(lookupScanSQL, [.integer(seq), .integer(Int64(limit))]) { row -> (seq: Int64, key: ItemLookupMap.Key?) in
            guard let itemClass = ItemClass.storedByCode[row.text(1)] else { return (row.int64(0), nil) }
            let values = ItemLookupMap.keyAttributes(of: itemClass).map { attribute in
                row.value(2 + Int32(lookupColumns.firstIndex(of: attribute)!))
            }
            return (row.int64(0), ItemLookupMap.Key(itemClass, values))
        }
    }

    // MARK: Re-encryption

    /// A stored secret and what it is sealed to.
    struct SealedSecret {
        let seq: Int64
        let itemClass: ItemClass
        let persistentRef: PersistentRef
        let accessGroup: String
        let box: [UInt8]
    }

    /// A stored secret's term, as a blob whose order is term order (`SealedBox.termStart`).
    private static let secretTerm = "substr(secret, \(SealedBox.termStart), \(SealedBox.termLength))"

    private static func termBlob(_ term: UInt32) -> SQLiteValue { .blob(SealedBox.termKey(term)) }

    /// How many stored secrets are sealed under a term older than `term`.
    static func countSecrets(olderThan term: UInt32, on db: SQLiteConnection) throws -> Int {
        Int(try db.scalarInt(
            "SELECT count(*) FROM items WHERE secret IS NOT NULL AND \(secretTerm) < ?", [termBlob(term)]) ?? 0)
    }

    /// Whether any stored secret is sealed under `term`.
    static func hasSecrets(underTerm term: UInt32, on db: SQLiteConnection) throws -> Bool {
        try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM items WHERE secret IS NOT NULL AND \(secretTerm) = ?)", [termBlob(term)])
            == 1
    }

    /// Up to `limit` secrets sealed under a term older than `term`, in `seq` order after `seq`.
    static func secrets(olderThan term: UInt32, after seq: Int64, limit: Int, on db: SQLiteConnection) throws
        -> [SealedSecret]
    {
        try db.query(
            """
            SELECT seq, class, persistent_ref, ifnull("accessGroup", ''), secret FROM items
            WHERE seq > ? AND secret IS NOT NULL AND \(secretTerm) < ? ORDER BY seq LIMIT ?
            """,
            [.integer(seq), termBlob(term), .integer(Int64(limit))]
        ) { row in
            guard let itemClass = ItemClass.storedByCode[row.text(1)], let ref = PersistentRef(row.text(2)) else {
                throw KeychainError.decode("a stored item has an unknown class or a malformed persistent reference")
            }
            return SealedSecret(
                seq: row.int64(0), itemClass: itemClass, persistentRef: ref, accessGroup: row.text(3), box: row.blob(4))
        }
    }

    static func replaceSecret(of seq: Int64, with box: [UInt8], on db: SQLiteConnection) throws {
        try db.execute("UPDATE items SET secret = ? WHERE seq = ?", [.blob(box), .integer(seq)])
    }

    // MARK: Items and values

    /// The lookup-map key of an item.
    static func lookupKey(of item: Item) -> ItemLookupMap.Key {
        let values = ItemLookupMap.keyAttributes(of: item.itemClass).map { item.attributes[$0].map(sqlValue) ?? .null }
        return ItemLookupMap.Key(item.itemClass, values)
    }

    /// The lookup-map keys of the items a filter can match, one per access group it sees, when it
    /// names all of its class's lookup attributes and compares them exactly (not
    /// case-insensitively); else nil.
    static func lookupKeys(of filter: ItemFilter) -> [ItemLookupMap.Key]? {
        var values: [SQLiteValue] = [.null]
        for attribute in ItemColumns.leadingLookup(of: filter.itemClass) {
            guard let wanted = filter.equal[attribute] else { return nil }
            if filter.caseInsensitive, case .string = wanted { return nil }
            values.append(sqlValue(wanted))
        }
        var keys: [ItemLookupMap.Key] = []
        keys.reserveCapacity(filter.accessGroups.count)
        for group in filter.accessGroups {
            values[0] = .text(group)
            keys.append(ItemLookupMap.Key(filter.itemClass, values))
        }
        return keys
    }

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
        guard let itemClass = ItemClass.storedByCode[row.text(1)], let ref = PersistentRef(row.text(2)) else {
            throw KeychainError.decode("a stored item has an unknown class or a malformed persistent reference")
        }
        return Item(
            itemClass: itemClass, persistentRef: ref,
            attributes: attributes(from: row, columns: columns, startingAt: firstAttributeColumn), secret: nil)
    }

    /// The attributes of a row that selected `columns` from column `first` on (absent when NULL).
    @inline(__always)
    static func attributes(from row: SQLiteStatement, columns: [Attribute], startingAt first: Int32)
        -> [Attribute: AttributeValue]
    {
        // Made at its size by the (inlined, specialized) initializer: `reserveCapacity` ran
        // unspecialized in the standard library and looked up type metadata (~1k instructions).
        var attributes = [Attribute: AttributeValue](minimumCapacity: columns.count)
        for (offset, attribute) in columns.enumerated() {
            let column = first + Int32(offset)
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
        return attributes
    }
}
