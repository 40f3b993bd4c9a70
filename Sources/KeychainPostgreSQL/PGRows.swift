internal import CLibPQ
import KeychainStore

/// The rows of one statement's result, in binary format. Owns its `PGresult` and clears it in
/// `deinit`; read it before it goes. Not Sendable: it belongs to the connection's thread.
final class PGRows {
    private let result: OpaquePointer

    init(result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    var count: Int { Int(PQntuples(result)) }

    /// The number of rows a command changed (`UPDATE 3`), 0 for a command that reports none.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

    /// The raw bytes of a field (its binary format).
    func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard length > 0, let value = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    func text(_ row: Int, _ column: Int) -> String {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard length > 0, let value = PQgetvalue(result, Int32(row), Int32(column)) else { return "" }
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// An `int8`, `int4` or `int2` field (binary: big-endian, of the type's width).
    func int64(_ row: Int, _ column: Int) -> Int64 {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        // A `numeric` (what `sum(bigint)` gives) is longer and would read as garbage: cast it.
        assert(length <= 8, "column \(column) is not an integer (\(length) bytes); cast it to bigint")
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return 0 }
        var accumulated: Int64 = 0
        value.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            for index in 0..<length { accumulated = accumulated << 8 | Int64(bytes[index]) }
        }
        // Sign-extend the narrower widths.
        let shift = Int64(64 - 8 * min(max(length, 1), 8))
        return (accumulated << shift) >> shift
    }

    /// An integer field, nil for NULL.
    func optionalInt64(_ row: Int, _ column: Int) -> Int64? { isNull(row, column) ? nil : int64(row, column) }

    /// A text field, nil for NULL.
    func optionalText(_ row: Int, _ column: Int) -> String? { isNull(row, column) ? nil : text(row, column) }

    func bool(_ row: Int, _ column: Int) -> Bool {
        guard PQgetlength(result, Int32(row), Int32(column)) == 1, let value = PQgetvalue(result, Int32(row), Int32(column))
        else { return false }
        return value.pointee != 0
    }
}
