public import Foundation
public import KeychainCore
import Synchronization

/// A `ProviderHoldStore` in memory: the reference the backends' tables are checked against, and
/// the store of refresher tests that need no database.
public final class InMemoryProviderHoldStore: ProviderHoldStore {
    private let holds = Mutex<[ProviderApp: Date]>([:])

    public init() {}

    public func holdEnd(_ app: ProviderApp, now: Date) throws -> Date? {
        holds.withLock { holds in holds[app].flatMap { $0 > now ? $0 : nil } }
    }

    public func hold(_ app: ProviderApp, until: Date, now: Date) throws {
        let until = until.truncatedToMilliseconds
        holds.withLock { holds in
            holds = holds.filter { $0.value > now }
            holds[app] = max(holds[app] ?? until, until)
        }
    }
}
