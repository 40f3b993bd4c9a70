import KeychainStore

/// A value bound to or read from SQLite. Blobs hold ciphertext or attribute bytes, never a
/// plaintext secret.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}
