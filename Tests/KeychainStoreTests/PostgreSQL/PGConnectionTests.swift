import Foundation
import KeychainConcurrency
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

@Suite("PostgreSQL connection")
struct PGConnectionTests {
    @Test func binaryParametersAndResultsRoundTrip() throws {
        let db = try PGTestDatabase().connect()
        try db.executeScript("CREATE TABLE t (id bigint, name text, data bytea, flag boolean, small integer)")
        let values: [(Int64, String, [UInt8], Bool)] = [
            (-1, "ä'\"\\ ;--", [0, 1, 255], true), (Int64.max, "", [], false), (Int64.min, "x", [0], true),
        ]
        for (id, name, data, flag) in values {
            try db.execute(
                "INSERT INTO t (id, name, data, flag, small) VALUES ($1, $2, $3, $4, -7)",
                [.int8(id), .text(name), .bytea(data), .bool(flag)])
        }
        try db.execute("INSERT INTO t (id, name, data, flag) VALUES ($1, $2, $3, $4)", [.int8(0), .null, .null, .null])
        let rows = try db.execute("SELECT id, name, data, flag, small FROM t ORDER BY id")
        #expect(rows.count == 4)
        let read = (0..<rows.count).map { row in
            (rows.int64(row, 0), rows.isNull(row, 1) ? nil : rows.text(row, 1), rows.bytes(row, 2), rows.bool(row, 3))
        }
        #expect(read.map(\.0) == [Int64.min, -1, 0, Int64.max])
        #expect(read.map(\.1) == ["x", "ä'\"\\ ;--", nil, ""])
        #expect(read.map(\.2) == [[0], [0, 1, 255], [], []])
        #expect(rows.isNull(2, 2) && rows.isNull(2, 3) && !rows.isNull(3, 2))
        #expect(read.map(\.3) == [true, true, false, false])
        #expect(rows.int64(0, 4) == -7)  // an int4 read sign-extended
    }

    @Test func aUniqueViolationCarriesItsSQLStateAndConstraintAndBecomesDuplicateItem() throws {
        let db = try PGTestDatabase().connect()
        try db.executeScript("CREATE TABLE t (k text CONSTRAINT t_k UNIQUE)")
        try db.execute("INSERT INTO t VALUES ($1)", [.text("a")])
        let error = #expect(throws: PostgreSQLError.self) { try db.execute("INSERT INTO t VALUES ($1)", [.text("a")]) }
        #expect(error?.sqlState == .uniqueViolation)
        #expect(error?.constraint == "t_k")
        #expect(error.map(StoreErrors.keychainError(for:))?.code == .duplicateItem)
        // The value never appears in the error's text.
        #expect(error.map { !"\($0)".contains("(a)") } == true)
        // ON CONFLICT DO NOTHING RETURNING: no row back, no error, the transaction goes on.
        let inserted = try db.transaction {
            try db.execute("INSERT INTO t VALUES ($1) ON CONFLICT DO NOTHING RETURNING k", [.text("a")]).count
        }
        #expect(inserted == 0)
    }

    @Test func aThrowingTransactionRollsBackAndTheConnectionStaysUsable() throws {
        let db = try PGTestDatabase().connect()
        try db.executeScript("CREATE TABLE t (k bigint)")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES ($1)", [.int8(1)])
                throw Stop()
            }
        }
        // A failed statement aborts the transaction; it is rolled back as a whole.
        #expect(throws: PostgreSQLError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES ($1)", [.int8(2)])
                try db.execute("SELECT 1 / 0")
            }
        }
        try db.transaction { try db.execute("INSERT INTO t VALUES ($1)", [.int8(3)]) }
        let rows = try db.execute("SELECT k FROM t")
        #expect(rows.count == 1 && rows.int64(0, 0) == 3)
        #expect(try db.execute("UPDATE t SET k = k + 1").affectedRows == 1)
    }

    @Test func anUnreachableServerIsAConnectionFailureAndIO() throws {
        // Port 1 on loopback: nothing listens there.
        let error = #expect(throws: PostgreSQLError.self) {
            try PGConnection(url: "host=127.0.0.1 port=1 user=keychaind dbname=postgres connect_timeout=2")
        }
        #expect(error?.isConnectionFailure == true)
        #expect(error.map(StoreErrors.keychainError(for:))?.code == .io)
    }
}

@Suite("PostgreSQL connections per thread")
struct PGConnectionsTests {
    private func backendPID(_ connections: PGConnections) throws -> Int64 {
        try connections.withConnection { try $0.execute("SELECT pg_backend_pid()").int64(0, 0) }
    }

    @Test func eachThreadKeepsItsOwnConnection() throws {
        let connections = PGConnections(url: try PGTestDatabase().url)
        let mine = try backendPID(connections)
        #expect(try backendPID(connections) == mine)
        let other = PThreadLocked<Int64?>(nil)
        let thread = Thread { other.withLock { $0 = try? self.backendPID(connections) } }
        thread.start()
        while other.withLock({ $0 }) == nil { usleep(1_000) }
        #expect(other.withLock { $0 } != mine)
    }

    @Test func aConnectionTheServerDroppedIsMadeAgainOnTheNextCall() throws {
        let database = try PGTestDatabase()
        let connections = PGConnections(url: database.url)
        let first = try backendPID(connections)
        // The server ends that session (as a restart or a failover does), waiting for its end.
        try database.connect().execute("SELECT pg_terminate_backend($1::int, 5000)", [.int8(first)])
        // The next call finds the connection closed and makes another; only a call that races
        // the end of the session (its socket not closed yet) fails, once, with errSecIO.
        var second: Int64?
        var failures = 0
        for _ in 0..<2 where second == nil {
            do {
                second = try backendPID(connections)
            } catch {
                #expect(StoreErrors.keychainError(for: error).code == .io)
                failures += 1
            }
        }
        #expect(failures <= 1)
        #expect(second != nil && second != first)
    }
}
