package import KeychainStore
import Testing

/// What every `KeyringStorage` must do, checked with `#expect`: call `run()` from one test per
/// backend (and `runShared()` where the storage is a `SharedKeyringStorage`, several nodes
/// writing it).
///
/// `make` returns a new storage over an empty, migrated database (and whatever keeps it alive).
/// The rows are opaque bytes to the storage: no key is needed.
package struct KeyringStorageConformance: Sendable {
    package typealias Factory = @Sendable () throws -> (storage: any KeyringStorage, keepAlive: AnyObject?)

    private let make: Factory

    package init(_ make: @escaping Factory) { self.make = make }

    /// Every check, each on a storage of its own.
    package func run() throws {
        try theFirstNodeInitialisesAndALaterOneFindsItDone()
        try aTermIsWrittenOnceUnderTheCheckValueItWasWrappedFor()
        try aRewrapReplacesEveryWrappedKeyAndTheCheckValue()
    }

    /// An empty keyring loads as nothing; `create` writes the check value and term 1 once, and a
    /// second `create` (another node, or a restart) writes nothing.
    package func theFirstNodeInitialisesAndALaterOneFindsItDone() throws {
        let (storage, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        #expect(try storage.load().checkValue == nil)
        #expect(try storage.load().terms.isEmpty)
        #expect(try storage.create(checkValue: [1], firstWrappedKey: [2]))
        #expect(try !storage.create(checkValue: [9], firstWrappedKey: [9]))
        let loaded = try storage.load()
        #expect(loaded.checkValue == [1])
        #expect(loaded.terms == [KeyringRows.StoredTerm(term: 1, wrappedKey: [2], encryptions: 0)])
    }

    /// A term is written once: the same number again, or under a check value a rekey replaced,
    /// writes nothing (the keyring then reads the rows again).
    package func aTermIsWrittenOnceUnderTheCheckValueItWasWrappedFor() throws {
        let (storage, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        #expect(try storage.create(checkValue: [1], firstWrappedKey: [2]))
        #expect(try storage.addTerm(2, wrappedKey: [3], checkValue: [1]))
        #expect(try !storage.addTerm(2, wrappedKey: [4], checkValue: [1]))
        #expect(try !storage.addTerm(3, wrappedKey: [5], checkValue: [6]))
        #expect(try storage.load().terms.map(\.term) == [1, 2])
        #expect(try storage.load().terms.map(\.wrappedKey) == [[2], [3]])
    }

    /// `rewrap` hands over the rows as stored and writes back every wrapped key and the check
    /// value, leaving the terms and their counts.
    package func aRewrapReplacesEveryWrappedKeyAndTheCheckValue() throws {
        let (storage, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        #expect(try storage.create(checkValue: [1], firstWrappedKey: [2]))
        #expect(try storage.addTerm(2, wrappedKey: [3], checkValue: [1]))
        var seen: KeyringRows?
        try storage.rewrap { rows in
            seen = rows
            return KeyringRewrap(terms: [(1, [7]), (2, [8])], checkValue: [6])
        }
        #expect(seen?.checkValue == [1])
        #expect(seen?.terms.map(\.wrappedKey) == [[2], [3]])
        let loaded = try storage.load()
        #expect(loaded.checkValue == [6])
        #expect(loaded.terms.map(\.term) == [1, 2])
        #expect(loaded.terms.map(\.wrappedKey) == [[7], [8]])
        #expect(loaded.terms.map(\.encryptions) == [0, 0])
        // The old check value no longer starts a term.
        #expect(try !storage.addTerm(3, wrappedKey: [9], checkValue: [1]))
    }

    /// Shared storage: the encryptions several nodes reserve add up in the term's count, which a
    /// rewrap keeps; an unknown term reserves nothing.
    package static func runShared(_ make: @escaping @Sendable () throws -> (storage: any SharedKeyringStorage, keepAlive: AnyObject?)) throws {
        try KeyringStorageConformance {
            let (storage, keepAlive) = try make()
            return (storage, keepAlive)
        }.run()
        let (storage, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        #expect(try storage.create(checkValue: [1], firstWrappedKey: [2]))
        #expect(try storage.addTerm(2, wrappedKey: [3], checkValue: [1]))
        #expect(try storage.reserveEncryptions(5, term: 2) == 5)
        #expect(try storage.reserveEncryptions(3, term: 2) == 8)
        #expect(try storage.reserveEncryptions(1, term: 7) == nil)
        try storage.rewrap { _ in KeyringRewrap(terms: [(1, [7]), (2, [8])], checkValue: [6]) }
        let loaded = try storage.load()
        #expect(loaded.checkValue == [6])
        #expect(loaded.terms.map(\.wrappedKey) == [[7], [8]])
        #expect(loaded.terms.map(\.encryptions) == [0, 8])
    }
}
