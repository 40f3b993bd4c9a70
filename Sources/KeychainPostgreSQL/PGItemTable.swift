import Foundation
import KeychainCore
import KeychainStore

/// The `items` table on PostgreSQL (`PGSchema`): every statement on it, each run on the
/// connection it is given, inside the caller's transaction when it writes. Secrets come and go
/// sealed: sealing and opening is the store's (the same `SealedBox` and AAD as on SQLite).
enum PGItemTable {
    /// A row as a find reads it: the item (its attributes only when asked for), its `seq`, the
    /// access group its secret is sealed to, and the sealed secret when asked for.
    struct Row {
        let seq: Int64
        let item: Item
        let accessGroup: String
        let sealedSecret: [UInt8]?
    }

    // MARK: Writing

    /// Inserts `item` with its secret as `sealedSecret`; returns the row's `seq`, or nil when the
    /// item's primary key (or persistent reference) is already stored. The clash does not abort
    /// the transaction (`ON CONFLICT DO NOTHING`), so the caller decides what it means.
    static func insert(_ item: Item, sealedSecret: [UInt8]?, on db: PGConnection) throws -> Int64? {
        let attributes = Attribute.attributes(of: item.itemClass)
        var values: [PGValue] = [.text(item.itemClass.code), .text(item.persistentRef.rawValue)]
        values.reserveCapacity(attributes.count + 3)
        for attribute in attributes { values.append(item.attributes[attribute].map(value) ?? .null) }
        values.append(sealedSecret.map(PGValue.bytea) ?? .null)
        let rows = try db.execute(insertSQL[item.itemClass]!, values)
        return rows.count == 1 ? rows.int64(0, 0) : nil
    }

    private static let insertSQL = Dictionary(uniqueKeysWithValues: ItemClass.storedClasses.map { itemClass in
        let attributes = Attribute.attributes(of: itemClass)
        let placeholders = (1...attributes.count + 3).map { "$\($0)" }.joined(separator: ", ")
        return (
            itemClass,
            "INSERT INTO items (class, persistent_ref, \(attributes.map(ItemColumns.column).joined(separator: ", ")), secret) "
                + "VALUES (\(placeholders)) ON CONFLICT DO NOTHING RETURNING seq"
        )
    })

    /// Deletes the rows matching `filter`; returns each one's access group, sealed secret's size
    /// and attributes (for the usage it frees).
    static func delete(_ filter: ItemFilter, on db: PGConnection) throws
        -> [(accessGroup: String, sealedBytes: Int, attributes: [Attribute: AttributeValue])]
    {
        let where_ = PGItemFilter(filter)
        let columns = Attribute.attributes(of: filter.itemClass)
        let rows = try db.execute(
            "DELETE FROM items WHERE \(where_.whereClause) RETURNING coalesce(\"accessGroup\", ''), coalesce(octet_length(secret), 0), "
                + columns.map(ItemColumns.column).joined(separator: ", "),
            where_.values)
        return (0..<rows.count).map {
            (rows.text($0, 0), Int(rows.int64($0, 1)), attributes(from: rows, row: $0, columns: columns, startingAt: 2))
        }
    }

    /// Sets the row `seq`'s `attributes` (nil: absent), its modification date and, when given, its
    /// sealed secret. A primary-key clash throws (SQLSTATE 23505) and aborts the transaction.
    static func update(
        _ seq: Int64, attributes: [(Attribute, AttributeValue?)], modificationDate: Int64, sealedSecret: [UInt8]?,
        on db: PGConnection
    ) throws {
        var assignments: [String] = []
        var values: [PGValue] = []
        for (attribute, newValue) in attributes {
            values.append(newValue.map(value) ?? .null)
            assignments.append("\(ItemColumns.column(attribute)) = $\(values.count)")
        }
        values.append(.int8(modificationDate))
        assignments.append("\"modificationDate\" = $\(values.count)")
        if let sealedSecret {
            values.append(.bytea(sealedSecret))
            assignments.append("secret = $\(values.count)")
        }
        values.append(.int8(seq))
        try db.execute("UPDATE items SET \(assignments.joined(separator: ", ")) WHERE seq = $\(values.count)", values)
    }

    // MARK: Reading

    /// The rows matching `filter` in `seq` order after `cursor`, at most `limit` (nil: all), with
    /// their attributes and sealed secrets when `contents` names them; `forUpdate` locks them
    /// until the transaction ends (an update re-seals each row it reads).
    static func rows(
        _ filter: ItemFilter, after cursor: Int64?, limit: Int?, contents: ItemContents, forUpdate: Bool = false,
        on db: PGConnection
    ) throws -> [Row] {
        let attributes = contents.contains(.attributes) ? Attribute.attributes(of: filter.itemClass) : []
        var where_ = PGItemFilter(filter)
        var sql = "SELECT seq, persistent_ref, coalesce(\"accessGroup\", ''), secret"
        for attribute in attributes { sql += ", \(ItemColumns.column(attribute))" }
        sql += " FROM items WHERE \(where_.whereClause)"
        if let cursor { sql += " AND seq > \(where_.bind(.int8(cursor)))" }
        sql += " ORDER BY seq"
        if let limit { sql += " LIMIT \(where_.bind(.int8(Int64(max(0, limit)))))" }
        if forUpdate { sql += " FOR UPDATE" }
        let rows = try db.execute(sql, where_.values)
        return try (0..<rows.count).map { row in
            guard let ref = PersistentRef(rows.text(row, 1)) else {
                throw KeychainError.decode("a stored item has a malformed persistent reference")
            }
            let values = Self.attributes(from: rows, row: row, columns: attributes, startingAt: 4)
            return Row(
                seq: rows.int64(row, 0),
                item: Item(itemClass: filter.itemClass, persistentRef: ref, attributes: values, secret: nil),
                accessGroup: rows.text(row, 2),
                sealedSecret: contents.contains(.secret) && !rows.isNull(row, 3) ? rows.bytes(row, 3) : nil)
        }
    }

    /// The attributes of `row`, which selected `columns` from column `first` on (absent when NULL).
    static func attributes(from rows: PGRows, row: Int, columns: [Attribute], startingAt first: Int)
        -> [Attribute: AttributeValue]
    {
        var values = [Attribute: AttributeValue](minimumCapacity: columns.count)
        for (offset, attribute) in columns.enumerated() where !rows.isNull(row, first + offset) {
            let column = first + offset
            switch attribute.valueType {
            case .string, .enumeration: values[attribute] = .string(rows.text(row, column))
            case .data: values[attribute] = .data(rows.bytes(row, column))
            case .integer: values[attribute] = .integer(rows.int64(row, column))
            case .bool: values[attribute] = .bool(rows.int64(row, column) != 0)
            case .date: values[attribute] = .date(Date(millisecondsSince1970: rows.int64(row, column)))
            }
        }
        return values
    }

    /// How many rows each stored class holds; reads no secret.
    static func countByClass(on db: PGConnection) throws -> [ItemClass: Int] {
        var counts: [ItemClass: Int] = [:]
        for itemClass in ItemClass.storedClasses { counts[itemClass] = 0 }
        let rows = try db.execute("SELECT class, count(*) FROM items GROUP BY class")
        for row in 0..<rows.count {
            if let itemClass = ItemClass.storedByCode[rows.text(row, 0)] { counts[itemClass] = Int(rows.int64(row, 1)) }
        }
        return counts
    }

    // MARK: Values

    /// An attribute value as stored: dates in milliseconds and booleans as 0/1, as on SQLite.
    static func value(_ value: AttributeValue) -> PGValue {
        switch value {
        case .string(let string): .text(string)
        case .data(let bytes): .bytea(bytes)
        case .integer(let number): .int8(number)
        case .bool(let flag): .int8(flag ? 1 : 0)
        case .date(let date): .int8(date.millisecondsSince1970)
        }
    }
}
