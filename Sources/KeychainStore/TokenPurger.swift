public import Foundation
public import KeychainCore
public import Logging

/// Forgets expired tokens, so that they never pile up: every `intervalSeconds`, the tokens that
/// expired more than `graceSeconds` ago (until then they are refused as expired, not unknown),
/// and the connect sessions that did (until then a client reads how they ended, or `expired`).
/// On several nodes each purges; the deletes are idempotent.
public final class TokenPurger: Sendable {
    public static let graceSeconds: TimeInterval = 3600
    private let clients: any ClientStore
    private let connectSessions: (any ConnectSessionStore)?
    private let intervalSeconds: Int
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    public init(
        clients: any ClientStore, connectSessions: (any ConnectSessionStore)? = nil, intervalSeconds: Int = 60, logger: Logger
    ) {
        self.clients = clients
        self.connectSessions = connectSessions
        self.intervalSeconds = intervalSeconds
        self.logger = logger
    }

    /// Starts the thread; the first purge runs at once.
    public func start() {
        let thread = Thread { [self] in
            defer { finished.signal() }
            repeat {
                purgeOnce()
            } while wake.wait(timeout: .now() + .seconds(intervalSeconds)) == .timedOut
        }
        thread.name = "keychaind-token-purge"
        thread.start()
    }

    /// Stops the thread and waits for a purge in progress.
    public func stop() {
        wake.signal()
        finished.wait()
    }

    /// Purges once now; how many tokens went (nil when the store failed, logged).
    @discardableResult
    public func purgeOnce() -> Int? {
        let before = Date().addingTimeInterval(-Self.graceSeconds)
        if let connectSessions {
            do {
                let purged = try connectSessions.purge(expiredBefore: before)
                if purged > 0 { logger.info("expired connect sessions purged", metadata: ["sessions": "\(purged)"]) }
            } catch {
                logger.warning("expired connect sessions could not be purged", metadata: ["reason": "\(error)"])
            }
        }
        do {
            let purged = try clients.purgeTokens(expiredBefore: before)
            if purged > 0 { logger.info("expired tokens purged", metadata: ["tokens": "\(purged)"]) }
            return purged
        } catch {
            logger.warning("expired tokens could not be purged", metadata: ["reason": "\(error)"])
            return nil
        }
    }
}
