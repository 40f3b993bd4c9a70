public import Foundation
public import KeychainCore
import Synchronization

/// `ConnectSessionStore` in memory: the reference the conformance suite checks the tables against.
public final class InMemoryConnectSessionStore: ConnectSessionStore {
    private let sessions = Mutex<[String: ConnectSession]>([:])

    public init() {}

    public func create(_ session: ConnectSession) throws {
        try sessions.withLock { sessions in
            guard sessions[session.id] == nil else { throw KeychainError.duplicateItem("connect session \(session.id)") }
            sessions[session.id] = session
        }
    }

    public func session(id: String) throws -> ConnectSession? { sessions.withLock { $0[id] } }

    public func bindBrowser(id: String, browserHash: [UInt8], stateHash: [UInt8], at now: Date) throws -> BrowserBinding {
        sessions.withLock { sessions in
            guard var session = sessions[id], session.outcome == .pending, session.expiresAt > now else { return .notPending }
            let sameBrowserBeforeCallback = session.browserHash == browserHash && session.stateHash != nil
            guard session.browserHash == nil || sameBrowserBeforeCallback else { return .heldElsewhere }
            session.browserHash = browserHash
            session.stateHash = stateHash
            sessions[id] = session
            return .bound
        }
    }

    public func consumeState(_ stateHash: [UInt8], at now: Date) throws -> ConnectSession? {
        sessions.withLock { sessions in
            guard
                var session = sessions.values.first(where: {
                    $0.stateHash == stateHash && $0.outcome == .pending && $0.expiresAt > now
                })
            else { return nil }
            session.stateHash = nil
            sessions[session.id] = session
            return session
        }
    }

    public func finish(id: String, outcome: ConnectOutcome) throws -> Bool {
        sessions.withLock { sessions in
            guard sessions[id]?.outcome == .pending else { return false }
            sessions[id]?.outcome = outcome
            return true
        }
    }

    public func ended(among ids: [String]) throws -> Set<String> {
        sessions.withLock { sessions in Set(ids.filter { sessions[$0].map { $0.outcome != .pending } ?? true }) }
    }

    public func purge(expiredBefore time: Date) throws -> Int {
        sessions.withLock { sessions in
            let expired = sessions.values.filter { $0.expiresAt < time }.map(\.id)
            for id in expired { sessions[id] = nil }
            return expired.count
        }
    }
}
