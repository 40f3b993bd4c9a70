/// Where a keyring's rows are kept: SQLite's `KeyringTable` for one node, PostgreSQL's
/// `PGKeyringStorage` for several. Holds no key: `Keyring` wraps and unwraps, the storage reads
/// and writes wrapped keys, the key check value and the encryption counts.
///
/// Several nodes may write the same rows, so each write says what it assumed: a term number
/// another node took first, or a check value a rekey elsewhere replaced, answers false (or
/// `KeyringChanged`) and the keyring reads the rows again (`Keyring.refreshTerms()`).
package protocol KeyringStorage: Sendable {
    /// Writes the key check value and term 1 into an empty keyring, in one transaction; false
    /// (nothing written) when the keyring already has a check value.
    func create(checkValue: [UInt8], firstWrappedKey: [UInt8]) throws -> Bool

    /// The key check value and every term, ascending, in one snapshot.
    func load() throws -> KeyringRows

    /// Writes `term`, which has sealed nothing yet, in a transaction of its own, provided the
    /// stored key check value is still `checkValue` (its key is wrapped under that master key).
    /// False, and nothing written, when the term exists already or the check value changed.
    func addTerm(_ term: UInt32, wrappedKey: [UInt8], checkValue: [UInt8]) throws -> Bool

    /// In one transaction that holds back every other keyring write: reads the rows, hands them
    /// to `rewrap`, and writes the wrapped keys and check value it returns.
    func rewrap(_ rewrap: (KeyringRows) throws -> KeyringRewrap) throws
}

/// A keyring's storage shared by several writers (PostgreSQL): the secrets each node seals are
/// counted against blocks of `leaseSize` it reserves ahead (`Keyring.seal(_:binding:)`), so that no
/// write waits on a row every node updates. With one writer (SQLite) each write transaction
/// records what it seals instead (`Keyring.seal(_:binding:on:)`).
package protocol SharedKeyringStorage: KeyringStorage {
    /// The encryptions a node reserves at a time.
    var leaseSize: UInt64 { get }

    /// Adds `count` to `term`'s encryption count in a transaction of its own and returns the
    /// count over every writer; nil when the term is not stored.
    func reserveEncryptions(_ count: UInt64, term: UInt32) throws -> UInt64?
}

/// A keyring's rows as stored.
package struct KeyringRows {
    package var checkValue: [UInt8]?
    package var terms: [StoredTerm]

    package init(checkValue: [UInt8]?, terms: [StoredTerm]) {
        self.checkValue = checkValue
        self.terms = terms
    }

    /// A term's row: its data key wrapped under the master key and how many secrets it sealed.
    package struct StoredTerm: Equatable {
        package let term: UInt32
        package let wrappedKey: [UInt8]
        package let encryptions: UInt64

        package init(term: UInt32, wrappedKey: [UInt8], encryptions: UInt64) {
            self.term = term
            self.wrappedKey = wrappedKey
            self.encryptions = encryptions
        }
    }
}

/// What a rekey writes: every term's data key wrapped under the new master key, and its check value.
package struct KeyringRewrap {
    package var terms: [(term: UInt32, wrappedKey: [UInt8])]
    package var checkValue: [UInt8]

    package init(terms: [(term: UInt32, wrappedKey: [UInt8])], checkValue: [UInt8]) {
        self.terms = terms
        self.checkValue = checkValue
    }
}

/// The stored keyring is not the one the keyring holds in memory (a term or rekey from another
/// node): read it again and retry.
package struct KeyringChanged: Error {}
