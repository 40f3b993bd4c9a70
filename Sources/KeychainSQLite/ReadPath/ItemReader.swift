import KeychainCore
import KeychainStore

/// How a find reads, from the SQLite store (through its find cache) or inside a transaction (on
/// the writer, past the cache): its rows, through the lookup map when the filter names every
/// lookup attribute, else through the lookup index; then its page, the secrets opened.
enum ItemReader {
    /// The rows a find selects, secrets still sealed, one more than its page (to know whether a
    /// next page exists): one more than its limit, or with a byte bound, up to the first row past it.
    static func rows(for key: FindCache.Key, lookups: ItemLookupMap, on db: SQLiteConnection) throws -> [FoundRow] {
        if let lookupKeys = ItemTable.lookupKeys(of: key.filter), let candidates = lookups.candidates(for: lookupKeys) {
            return try rows(for: key, at: candidates, on: db)
        }
        let shape = FindShape(key)
        let reader = RowReader(key)
        guard let maxBytes = key.maxBytes else { return try db.query(shape, shape.values(of: key), row: reader.row) }
        var bound = PageBound(maxBytes: maxBytes)
        return try db.query(shape, shape.values(of: key), row: reader.row, until: { bound.isPast(after: $0) })
    }

    /// Tells when the rows read so far hold a page of at most `maxBytes` and one row more.
    private struct PageBound {
        let maxBytes: Int
        var rows = 0
        var bytes = 0

        mutating func isPast(after row: FoundRow) -> Bool {
            rows += 1
            bytes += row.size
            return rows >= 2 && bytes > maxBytes
        }
    }

    /// The same rows read by `seq` from the lookup map's `candidates` (ascending): those after the
    /// cursor that match the filter, up to one more than the limit.
    private static func rows(for key: FindCache.Key, at candidates: [Int64], on db: SQLiteConnection) throws
        -> [FoundRow]
    {
        let shape = FindShape(key, atSequence: true)
        let reader = RowReader(key)
        let wanted = key.limit.map { max(0, $0) + 1 } ?? .max
        let after = key.after?.afterSequence ?? 0
        var bound = key.maxBytes.map { PageBound(maxBytes: $0) }
        var rows: [FoundRow] = []
        for seq in candidates where seq > after {
            guard rows.count < wanted else { break }
            let read = try db.query(shape, shape.values(of: key, at: seq), row: reader.row)
            rows += read
            if let row = read.first, bound?.isPast(after: row) == true { break }
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
            let columns = ItemTable.columnsByClass[key.filter.itemClass]!
            readsAttributes = key.contents.contains(.attributes)
            readsSecret = key.contents.contains(.secret)
            decoded = readsAttributes ? columns.attributes : []
            secretColumn = columns.secretColumn(key.contents)
        }

        func row(_ row: SQLiteStatement) throws -> FoundRow {
            FoundRow(
                seq: row.int64(0), item: try ItemTable.item(from: row, columns: decoded),
                sealedSecret: readsSecret && !row.isNull(secretColumn) ? row.blob(secretColumn) : nil,
                accessGroup: readsSecret && !readsAttributes ? row.text(ItemTable.firstAttributeColumn) : nil)
        }
    }
}
