import KeychainStore

/// A parameter sent to PostgreSQL, always in binary format: UTF-8 text without NUL, big-endian
/// integers, raw bytes. Nothing is ever spliced into SQL text, so nothing needs escaping.
enum PGValue {
    case null
    case int8(Int64)
    case text(String)
    case bytea([UInt8])
    case bool(Bool)
}
