import KeychainCore
import KeychainStore

/// What decides the text of a filter's WHERE clause, apart from the values bound to it: the class
/// (a literal, a fixed code, so the planner can use that class's partial indexes), how many access
/// groups, whether a persistent reference is given, and which attributes are compared, in name
/// order, each folded or not. The text is made from the shape alone and the values from the
/// filter in the shape's order, so equal shapes always mean the same SQL.
struct FilterShape: Hashable {
    struct Comparison: Hashable {
        let attribute: Attribute
        /// Compared with `KEYCHAIN_NOCASE`: a string value in a case-insensitive filter.
        let folded: Bool
    }

    let itemClass: ItemClass
    let accessGroupCount: Int
    let hasPersistentRef: Bool
    let comparisons: [Comparison]

    init(_ filter: ItemFilter) {
        itemClass = filter.itemClass
        accessGroupCount = filter.accessGroups.count
        hasPersistentRef = filter.persistentRef != nil
        comparisons = filter.equal.sorted { $0.key.name < $1.key.name }.map { attribute, wanted in
            if filter.caseInsensitive, case .string = wanted { return Comparison(attribute: attribute, folded: true) }
            return Comparison(attribute: attribute, folded: false)
        }
    }

    var whereClause: String {
        // `=` or a chain of `OR`s rather than `IN (…)`: SQLite builds an ephemeral table for an IN
        // list on every execution, which cost more than the rest of a point read.
        var clause = "class = '\(itemClass.code)' AND ("
        clause += repeatElement(Self.groupTerm, count: accessGroupCount).joined(separator: " OR ")
        clause += ")"
        if hasPersistentRef { clause += " AND persistent_ref = ?" }
        for comparison in comparisons {
            clause += " AND \(Schema.effective(comparison.attribute)) = ?"
            if comparison.folded { clause += " COLLATE \(SQLiteConnection.caseInsensitiveCollation)" }
        }
        return clause
    }

    /// `filter`'s values in the order of `whereClause`'s parameters; `filter` has this shape.
    func values(of filter: ItemFilter, reservingExtra extra: Int = 0) -> [SQLiteValue] {
        var values: [SQLiteValue] = []
        values.reserveCapacity(accessGroupCount + (hasPersistentRef ? 1 : 0) + comparisons.count + extra)
        for group in filter.accessGroups { values.append(.text(group)) }
        if let ref = filter.persistentRef { values.append(.text(ref.rawValue)) }
        for comparison in comparisons {
            values.append(ItemTable.sqlValue(filter.equal[comparison.attribute]!))
        }
        return values
    }

    private static let groupTerm = "ifnull(\"accessGroup\", '') = ?"
}

/// What decides a find's SELECT: its filter's shape, which contents are read (attributes, sealed
/// secrets), and whether a cursor and a limit are bound. A connection keeps one prepared
/// statement per shape, found by the shape itself (`SQLiteConnection.statement(for:)`), so a
/// point read neither builds its SQL text (the class's attribute columns: 16 for a generic
/// password) nor hashes it to find the statement.
struct FindShape: Hashable {
    let filter: FilterShape
    let contents: ItemContents
    /// Reads the one row of a given `seq` (a candidate of the lookup map) that matches the filter,
    /// with no cursor, order or limit of its own.
    let atSequence: Bool
    let afterCursor: Bool
    let limited: Bool

    init(_ key: FindCache.Key, atSequence: Bool = false) {
        filter = FilterShape(key.filter)
        contents = key.contents
        self.atSequence = atSequence
        afterCursor = !atSequence && key.after != nil
        limited = !atSequence && key.limit != nil
    }

    var sql: String {
        var sql = "SELECT \(ItemTable.columnsByClass[filter.itemClass]!.selectList(contents)) FROM items WHERE "
        sql += filter.whereClause
        if atSequence { return sql + " AND seq = ?" }
        if afterCursor { sql += " AND seq > ?" }
        sql += " ORDER BY seq"
        if limited { sql += " LIMIT ?" }
        return sql
    }

    /// The values to bind for `key` (which has this shape): the filter's, the cursor's sequence,
    /// and one more than the limit (to know whether a next page exists).
    func values(of key: FindCache.Key) -> [SQLiteValue] {
        var values = filter.values(of: key.filter, reservingExtra: 2)
        if let cursor = key.after { values.append(.integer(cursor.afterSequence)) }
        if let limit = key.limit { values.append(.integer(Int64(max(0, limit)) + 1)) }
        return values
    }

    /// The values to bind for `key` read at row `seq` (an `atSequence` shape).
    func values(of key: FindCache.Key, at seq: Int64) -> [SQLiteValue] {
        var values = filter.values(of: key.filter, reservingExtra: 1)
        values.append(.integer(seq))
        return values
    }
}
