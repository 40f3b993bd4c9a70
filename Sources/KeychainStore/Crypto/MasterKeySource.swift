import KeychainCore

/// Where a keyring reads the master key again when it needs it: only to wrap a new term's data
/// key (`rotate()`, or a term started at the rotation threshold). For a data directory, its key
/// files (`master.key`, then `master.key.new` while a rekey finishes); the keyring takes the one
/// whose key check value matches.
package struct MasterKeySource: Sendable {
    let candidates: @Sendable () throws -> [SecretBytes]
}
