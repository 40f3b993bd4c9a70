#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainCore
import KeychainStore

/// `RefreshExchangeLock` across nodes: a PostgreSQL session advisory lock named by the setting
/// (`pg_try_advisory_lock(hashtext('keychaind:refresh'), hashtext(key))`), taken on the calling
/// thread's connection and released after the exchange. The exchange stores its tokens on that
/// same connection meanwhile; should the connection drop, the lock goes with its session and
/// another node may exchange (the stored state then tells it what happened).
final class PGRefreshExchangeLock: RefreshExchangeLock {
    private let connections: PGConnections

    init(connections: PGConnections) { self.connections = connections }

    func withLock(_ key: RefreshKey, waitingUpTo seconds: Double, _ body: () throws -> Void) throws -> Bool {
        let name = "\(key.group)\u{1F}\(key.service)\u{1F}\(key.user ?? "")"
        let deadline = Date().addingTimeInterval(seconds)
        while try !StoreErrors.map({
            try connections.withConnection { db in
                try db.execute("SELECT pg_try_advisory_lock(hashtext('keychaind:refresh'), hashtext($1))", [.text(name)]).bool(0, 0)
            }
        }) {
            guard Date() < deadline else { return false }
            usleep(20_000)
        }
        defer {
            _ = try? connections.withConnection { db in
                try db.execute("SELECT pg_advisory_unlock(hashtext('keychaind:refresh'), hashtext($1))", [.text(name)])
            }
        }
        try body()
        return true
    }
}
