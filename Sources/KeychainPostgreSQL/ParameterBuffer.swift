internal import CLibPQ
import KeychainStore

/// The binary encoding of one call's parameters, all in one buffer: the pointers handed to
/// `PQexecPrepared` point into it and stay valid for the call.
struct ParameterBuffer {
    private var bytes: [UInt8] = []
    /// Each parameter's offset into `bytes` and length, nil for NULL.
    private var fields: [(offset: Int, length: Int)?] = []

    init(_ values: [PGValue]) {
        fields.reserveCapacity(values.count)
        for value in values {
            let offset = bytes.count
            switch value {
            case .null:
                fields.append(nil)
                continue
            case .int8(let number):
                withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
            case .text(let text):
                bytes.append(contentsOf: text.utf8)
            case .bytea(let data):
                bytes.append(contentsOf: data)
            case .bool(let flag):
                bytes.append(flag ? 1 : 0)
            }
            fields.append((offset, bytes.count - offset))
        }
    }

    /// Calls `body` with libpq's three parallel arrays: values, lengths and formats (all binary).
    func withParameters<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> T
    ) rethrows -> T {
        let lengths = fields.map { Int32($0?.length ?? 0) }
        let formats = [Int32](repeating: 1, count: fields.count)
        // A zero-length value still needs a non-null pointer (NULL means SQL NULL).
        var storage = bytes
        storage.append(0)
        return try storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = fields.map { field in field.map { base + $0.offset } }
            return try pointers.withUnsafeBufferPointer { pointers in
                try lengths.withUnsafeBufferPointer { lengths in
                    try formats.withUnsafeBufferPointer { formats in
                        try body(pointers.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
