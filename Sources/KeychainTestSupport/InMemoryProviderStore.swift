public import KeychainCore
import Synchronization

/// A `ProviderStore` in memory, for route tests and the conformance suite's reference. Nothing is
/// sealed: there is no database to distrust.
public final class InMemoryProviderStore: ProviderStore {
    private let providers = Mutex<[String: OAuthProvider]>([:])

    public init() {}

    public func save(_ provider: OAuthProvider) throws -> Bool {
        providers.withLock { $0.updateValue(provider, forKey: provider.name) != nil }
    }

    public func provider(named name: String) throws -> OAuthProvider? {
        providers.withLock { $0[name] }
    }

    public func list() throws -> [OAuthProvider] {
        providers.withLock { $0.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) } }
    }

    public func delete(named name: String) throws -> Bool {
        providers.withLock { $0.removeValue(forKey: name) != nil }
    }
}
