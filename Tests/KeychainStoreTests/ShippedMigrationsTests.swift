import Foundation
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL
@testable import KeychainSQLite

/// A database was made with its migrations' exact text, and a restore compares a backup's schema
/// with a replay of them: a migration that changes after it shipped leaves existing vaults with
/// another schema than the code expects and their backups unrestorable (issue 41). Each shipped
/// migration's SHA-256 is pinned here; a schema change is a new migration, whose digest is added
/// when it is.
@Suite struct ShippedMigrationsTests {
    static let sqlite: [Int64: String] = [
        1: "c9c99f12f91e003cc64e689db417682ab864c0022f3315b16d64d002ea3b75e4",
        2: "93de90756dfe0518decd8d2e99fd6904d746ca5b5dfec9b60888d05ff28aab9d",
        3: "6a749e23b988c08085c3d27fbd36a5067d7d5851ba4272ce17faa0c42104b81b",
        4: "cf20a01d3445e4bca59599a42fd7c64f7a2f9b64d86e2ab8a75fe319739ba5a7",
        5: "ef1ded293211d4c6f5fd34ed4bb35908e9379b3f83f272be9b97cdb981b38206",
        6: "76e16eb6233b060014374f5ff77e1a980b9ad8d1a43b7e90675319c7e0dfff54",
        7: "1c42305c2bf9ceafe7d077df6201c709c6a112dc917c6e2e70bf09cbaaf96c7f",
        8: "57bf6c3cbc3321409b512dfccf8f7cd8288515f0c7d20502819f81c67456bc94",
        9: "deaa68095df1e455ae965bc6fa80be60625c0eba8db6d43773c0dc4005cc492e",
        10: "d03bd19ea81d1843011c4647a7d442331bb9ebd63e93bad9eae02f86cb5942e8",
        11: "bd3c167f1d15e006223e652bb9b0f5bf12c1f352074ce3121805f0bce1629341",
    ]

    static let postgresql: [Int64: String] = [
        1: "787c026b7ba249e961dc705f26a2703b79353fe8967b08fc7cd7a6de5192be08",
        2: "4d5a3dd7cb6bff0a3ba881275d69f50d02a1457ed02a4757e72fac30e072dd03",
        3: "36c35acba3e0d33bc00eef7d2feaa8e660d30b582897d2cd051b54532e2fe91c",
        4: "0b88d751cfec46e9e879a1403649ad5a1ad18c5ff0e78e8949bb9ed0d544001b",
        5: "2ed0176e95e9e432b688f114f35c2835222d5638a11dee22400cd22053fe4d01",
        6: "63545a05bff335326383bc3cddf66a2a695c4b4bd648a610df1524dd86703eda",
        7: "abf3d301c6fa594214245f24f43c192f9e495c925804663a3bfa8d3dcc6eb28a",
        8: "ce5b38dd2dde6cd705b92764184fb5d52d326da5f6080d54ee7d2177cf5a88f0",
        9: "08d33fa1a7349a8f4df1436056298313c0aeef4602bdc314e5178cf9097ce176",
        10: "684d5a1dd3a734e0a8b1a68869b6ecf0730808476b16dd20046974bd610dd324",
        11: "2d4f94b689bc3d9a143bc33cb25884687a72467841f3605a972a96f59968ed40",
    ]

    @Test func sqliteMigrationsAreAsShipped() {
        check(Migrations.all, against: Self.sqlite, backend: "SQLite")
    }

    @Test func postgresqlMigrationsAreAsShipped() {
        check(PGMigrations.all, against: Self.postgresql, backend: "PostgreSQL")
    }

    /// Every pinned migration is there with its text, numbered 1, 2, ... with no gap, and every
    /// migration is pinned (a new one is told its digest).
    private func check(_ migrations: [(version: Int64, script: String)], against pinned: [Int64: String], backend: String) {
        #expect(migrations.map(\.version) == Array(1...Int64(migrations.count)), "\(backend) migrations are numbered 1, 2, ...")
        for version in pinned.keys.sorted() where !migrations.contains(where: { $0.version == version }) {
            Issue.record("\(backend) migration \(version) is gone: shipped migrations never change: add a new one")
        }
        for migration in migrations {
            let digest = Digest.sha256(Array(migration.script.utf8)).map { String(format: "%02x", $0) }.joined()
            guard let shipped = pinned[migration.version] else {
                Issue.record("\(backend) migration \(migration.version) is not pinned: add \(migration.version): \"\(digest)\" to ShippedMigrationsTests")
                continue
            }
            #expect(digest == shipped, "\(backend) migration \(migration.version) changed: shipped migrations never change: add a new one")
        }
    }
}
