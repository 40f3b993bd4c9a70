import Testing
@testable import KeychainStore

@Suite("PostgreSQL keyring table")
struct PGKeyringTableTests {
    private func migrated() throws -> PGConnection {
        let db = try PGTestDatabase().connect()
        try PGMigrations.apply(on: db)
        return db
    }

    @Test func theFirstNodeInitialisesAndALaterOneFindsItDone() throws {
        let db = try migrated()
        #expect(try PGKeyringTable.load(on: db).checkValue == nil)
        #expect(try PGKeyringTable.load(on: db).terms.isEmpty)
        #expect(try db.transaction { try PGKeyringTable.create(checkValue: [1], firstWrappedKey: [2], on: db) })
        #expect(try !db.transaction { try PGKeyringTable.create(checkValue: [9], firstWrappedKey: [9], on: db) })
        let loaded = try PGKeyringTable.load(on: db)
        let (check, terms) = (loaded.checkValue, loaded.terms)
        #expect(check == [1])
        #expect(terms == [KeyringRows.StoredTerm(term: 1, wrappedKey: [2], encryptions: 0)])
    }

    @Test func aTermIsWrittenOnceAndCountsAddUpOverNodes() throws {
        let db = try migrated()
        _ = try PGKeyringTable.create(checkValue: [1], firstWrappedKey: [2], on: db)
        #expect(try PGKeyringTable.insertTerm(2, wrappedKey: [3], on: db))
        #expect(try !PGKeyringTable.insertTerm(2, wrappedKey: [4], on: db))
        #expect(try PGKeyringTable.addEncryptions(5, term: 2, on: db) == 5)
        #expect(try PGKeyringTable.addEncryptions(3, term: 2, on: db) == 8)
        try PGKeyringTable.rewrap([(1, [7]), (2, [8])], checkValue: [6], on: db)
        let loaded = try PGKeyringTable.load(on: db)
        let (check, terms) = (loaded.checkValue, loaded.terms)
        #expect(check == [6])
        #expect(terms.map(\.wrappedKey) == [[7], [8]])
        #expect(terms.map(\.encryptions) == [0, 8])
    }
}
