import KeychainCore
import Logging

/// An open vault: the item and client stores over one database, the token issuer, and the keyring.
public final class Vault: Sendable {
    let pool: ConnectionPool
    private let itemStore: SQLiteItemStore
    private let clientStore: SQLiteClientStore
    /// The data keys; `rotate()` and `rewrap(under:)` for key management.
    public let keyring: Keyring

    init(pool: ConnectionPool, keyring: Keyring, logger: Logger) {
        self.pool = pool
        self.keyring = keyring
        itemStore = SQLiteItemStore(pool: pool, keyring: keyring, logger: logger)
        clientStore = SQLiteClientStore(pool: pool)
    }

    public var items: any ItemStore { itemStore }
    public var clients: any ClientStore { clientStore }
    public var tokenIssuer: any ClientTokenIssuer { OpenSSLClientTokenIssuer() }

    /// Closes every connection; idempotent. Later calls on the stores fail with errSecIO.
    public func close() { pool.close() }
}
