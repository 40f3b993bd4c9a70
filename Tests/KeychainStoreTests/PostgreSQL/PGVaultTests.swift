import Foundation
import KeychainTestSupport
import KeychainCore
import Testing
@testable import KeychainStore
@testable import KeychainPostgreSQL

/// Nodes of one PostgreSQL vault in one process: each a `Vault` with a data directory of its
/// own (a copy of the first node's master.key) over the same database.
final class Cluster: @unchecked Sendable {
    let database: PGTestDatabase
    let settings: PGSettings
    let first = TemporaryDirectory()
    private(set) var nodes: [Vault] = []
    private var directories: [TemporaryDirectory] = []

    init(nodes count: Int, rotationThreshold: UInt64 = Keyring.defaultRotationThreshold, leaseSize: UInt64 = 10_000) throws {
        database = try PGTestDatabase()
        settings = PGSettings(url: database.url)
        let firstDirectory = DataDirectory(path: first.dataPath)
        #expect(try firstDirectory.initializePostgreSQL(settings, logger: quietLogger))
        for index in 0..<count {
            let directory: DataDirectory
            if index == 0 {
                directory = firstDirectory
            } else {
                let copy = TemporaryDirectory()
                directories.append(copy)
                directory = DataDirectory(path: copy.dataPath)
                try directory.createIfMissing()
                try copyMasterKey(to: directory)
            }
            nodes.append(
                try directory.openPostgreSQL(
                    settings, release: "0.1.0", logger: quietLogger, locked: false, quota: .unlimited,
                    rotationThreshold: rotationThreshold,
                    leaseSize: leaseSize))
        }
    }

    func copyMasterKey(to directory: DataDirectory) throws {
        try? FileManager.default.removeItem(atPath: directory.masterKeyPath)
        try MasterKeyFile.write(try MasterKeyFile.read(from: DataDirectory(path: first.dataPath).masterKeyPath), to: directory.masterKeyPath)
    }

    func directory(of node: Int) -> DataDirectory {
        DataDirectory(path: node == 0 ? first.dataPath : directories[node - 1].dataPath)
    }

    deinit { nodes.forEach { $0.close() } }
}

@Suite("PostgreSQL vault: several nodes over one database")
struct PGVaultTests {
    private let filter = ItemFilter(itemClass: .genericPassword, accessGroups: ["g1"])

    @Test func aWriteOnOneNodeIsReadOnAnotherAtOnce() throws {
        let cluster = try Cluster(nodes: 2)
        let written = item(account: "a", service: "s", secret: "from node 0")
        try cluster.nodes[0].items.add([written])
        let page = try cluster.nodes[1].items.find(filter, limit: nil, after: nil, reading: .all)
        #expect(page.items.map(\.persistentRef) == [written.persistentRef])
        #expect(page.items.first?.secret?.utf8String() == "from node 0")
    }

    @Test func aSecondInitialisationFindsTheVaultAndDoesNothing() throws {
        let cluster = try Cluster(nodes: 1)
        let other = TemporaryDirectory()
        #expect(try DataDirectory(path: other.dataPath).initializePostgreSQL(cluster.settings, logger: quietLogger) == false)
        #expect(!FileManager.default.fileExists(atPath: DataDirectory(path: other.dataPath).masterKeyPath))
    }

    @Test func aNodeWithAnotherMasterKeyIsRefused() throws {
        let cluster = try Cluster(nodes: 1)
        let other = TemporaryDirectory()
        let directory = DataDirectory(path: other.dataPath)
        try directory.createIfMissing()
        try MasterKeyFile.write(try MasterKeyFile.generate(), to: directory.masterKeyPath)
        let error = #expect(throws: DataDirectoryError.self) { try directory.openPostgreSQL(cluster.settings, release: "0.1.0", logger: quietLogger) }
        #expect(error?.code == .wrongMasterKey)
    }

    @Test func lockOnOneNodeLocksEveryNodeAndUnlockOnAnotherUnlocksThem() throws {
        let cluster = try Cluster(nodes: 3)
        cluster.nodes[0].lock()
        #expect(waitUntil(within: 3) { cluster.nodes.allSatisfy(\.isLocked) })
        let error = #expect(throws: KeychainError.self) {
            _ = try cluster.nodes[2].items.find(filter, limit: nil, after: nil, reading: .all)
        }
        #expect(error?.code == .interactionNotAllowed)
        try cluster.nodes[1].unlock()
        #expect(waitUntil(within: 3) { cluster.nodes.allSatisfy { !$0.isLocked } })
    }

    @Test func aClientRevokedOnOneNodeIsRefusedByAnotherWithinASecond() throws {
        let cluster = try Cluster(nodes: 2)
        let hash = [UInt8](repeating: 7, count: 32)
        try cluster.nodes[0].clients.addClient(
            Client(name: "svc", accessGroups: ["g1"], role: .client, createdAt: Date()), tokenHash: hash)
        // Node 1 finds it and caches it.
        #expect(try cluster.nodes[1].clients.client(forTokenHash: hash)?.name == "svc")
        #expect(try cluster.nodes[1].clients.client(forTokenHash: hash)?.name == "svc")
        #expect(try cluster.nodes[0].clients.removeClient(named: "svc", now: Date()))
        #expect(try waitUntil(within: 1.5) { try cluster.nodes[1].clients.client(forTokenHash: hash) == nil })
    }

    @Test func termsStartedOnOneNodeAreLearnedByTheOthers() throws {
        // A term is full after 10 secrets, reserved 4 at a time: writes on both nodes start new
        // terms, and every secret opens on every node.
        let cluster = try Cluster(nodes: 2, rotationThreshold: 10, leaseSize: 4)
        var written: [Item] = []
        for index in 0..<30 {
            let next = item(account: "a\(index)", secret: "secret-\(index)")
            try cluster.nodes[index % 2].items.add([next])
            written.append(next)
        }
        #expect(cluster.nodes[0].keyring.currentTerm >= 3)
        for node in cluster.nodes {
            let page = try node.items.find(filter, limit: nil, after: nil, reading: .all)
            #expect(page.items.map { $0.secret?.utf8String() } == written.map { $0.secret?.utf8String() })
        }
        // No term sealed more than the threshold, over both nodes (a reservation that would
        // cross it is left unused, and counted: the count may only over-count).
        let perTerm = try cluster.database.connect().execute(
            "SELECT count(*) FROM items GROUP BY substring(secret FROM 2 FOR 4)")
        #expect(perTerm.count >= 3)
        #expect((0..<perTerm.count).allSatisfy { perTerm.int64($0, 0) <= 10 })
    }

    @Test func afterARekeyTheOtherNodesServeAndTakeTheNewKeyOnceCopied() throws {
        let cluster = try Cluster(nodes: 2)
        #expect(try cluster.nodes[0].rekey() == 1)
        // Node 1 still has the old key file: it keeps serving with the keys it holds ...
        try cluster.nodes[1].items.add([item(account: "during", secret: "written after the rekey")])
        #expect(throws: KeychainError.self) { _ = try cluster.nodes[1].rotate(reencrypt: false) }
        // ... and starts terms again once the new master.key is copied to it.
        try cluster.copyMasterKey(to: cluster.directory(of: 1))
        let term = try cluster.nodes[1].rotate(reencrypt: false)
        try cluster.nodes[1].items.add([item(account: "after", secret: "under the new term")])
        #expect(waitUntil(within: 3) { (try? cluster.nodes[0].items.find(filter, limit: nil, after: nil, reading: .all).items.count) == 2 })
        #expect(cluster.nodes[0].keyring.terms.contains(term) || cluster.nodes[0].keyring.currentTerm == term)
    }

    @Test func healthSaysWhetherTheDatabaseAnswersAndMetricsCountItsUse() throws {
        let cluster = try Cluster(nodes: 1)
        #expect(cluster.nodes[0].storage == StorageHealth(backend: .postgresql, reachable: true))
        let before = try #require(cluster.nodes[0].database)
        try cluster.nodes[0].items.add([item(account: "counted")])
        let after = try #require(cluster.nodes[0].database)
        #expect(after.statements > before.statements)
        #expect(after.statementsByLatency.reduce(0, +) <= after.statements)
        #expect(after.connectionsOpen >= 2)
        #expect(after.connectionsInUse == 0)
        #expect(throws: KeychainError.self) { _ = try cluster.nodes[0].backupFile() }
    }
}
