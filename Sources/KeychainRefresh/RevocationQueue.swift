import Foundation
import KeychainConcurrency
import KeychainCore

/// RFC 7009 revocations of deleted refresh tokens, sent after the delete was answered: one at a
/// time on a thread of their own (started when one is waiting, ended when none is), so that no
/// request waits for a provider and a provider that hangs delays only the revocations behind it.
/// At most `limit` wait; one more is dropped. Each outcome is counted in `metrics`; no token is
/// ever logged.
final class RevocationQueue: Sendable {
    private struct Revocation: Sendable {
        let refreshToken: SecretBytes
        let provider: OAuthProvider
    }

    private let endpoint: any TokenEndpoint
    private let metrics: RefreshMetrics
    private let limit: Int
    private let state = PThreadLocked<(waiting: [Revocation], running: Bool)>(([], false))

    init(endpoint: any TokenEndpoint, metrics: RefreshMetrics, limit: Int = 1024) {
        self.endpoint = endpoint
        self.metrics = metrics
        self.limit = limit
    }

    /// Queues the revocation of `refreshToken` at `provider`'s revocation endpoint.
    func revoke(_ refreshToken: SecretBytes, at provider: OAuthProvider) {
        let startThread = state.withLock { state -> Bool? in
            guard state.waiting.count < limit else { return nil }
            state.waiting.append(Revocation(refreshToken: refreshToken, provider: provider))
            defer { state.running = true }
            return !state.running
        }
        switch startThread {
        case nil:
            metrics.record(.dropped)
        case true?:
            let thread = Thread { [self] in drain() }
            thread.name = "keychaind-revoke"
            thread.start()
        case false?:
            break
        }
    }

    /// Sends the waiting revocations until none is left.
    private func drain() {
        while let next = state.withLock({ state -> Revocation? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            return state.waiting.removeFirst()
        }) {
            do {
                try endpoint.revoke(next.refreshToken, at: next.provider)
                metrics.record(.revoked)
            } catch .refused {
                metrics.record(.refused)
            } catch {
                metrics.record(.failed)
            }
        }
    }
}
