import Foundation
import KeychainCore
import Logging
import Synchronization

/// A vault's background re-encryption: at most one job at a time, a newer one cancelling the
/// one before, run on a thread of its own over the store's `ReencryptingStore` operations.
final class Reencryptions: Sendable {
    private let store: any ReencryptingStore
    private let logger: Logger
    private let current = Mutex<ReencryptionJob?>(nil)

    /// How many secrets one re-encryption transaction re-seals.
    static let batchSize = 200

    init(store: any ReencryptingStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The last (or running) job's progress, nil when none ran since start.
    var progress: ReencryptionProgress? { current.withLock { $0?.progress } }

    /// `VaultAdministration.rotate(reencrypt:)`: a new term in `keyring`, and with `reencrypt` the
    /// job that re-seals the older secrets under it.
    func rotate(_ keyring: Keyring, reencrypt: Bool) throws -> UInt32 {
        let term = try keyring.rotate()
        if reencrypt { start(olderThan: term) }
        return term
    }

    /// Starts (or restarts) the job that re-seals every secret older than `term`.
    func start(olderThan term: UInt32) {
        let job = ReencryptionJob(targetTerm: term)
        let previous = current.withLock { current -> ReencryptionJob? in
            defer { current = job }
            return current
        }
        previous?.cancel()
        let (store, logger) = (store, logger)
        let thread = Thread { job.run(store: store, batchSize: Self.batchSize, logger: logger) }
        thread.name = "keychaind-reencrypt"
        thread.start()
    }

    /// Stops the running job, if any.
    func cancel() { current.withLock { $0 }?.cancel() }

    /// Waits (bounded) until the current job is no longer running; for tests.
    func wait(timeout: Double) -> ReencryptionProgress? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let progress = progress
            if progress?.state != .running { return progress }
            usleep(10_000)
        }
        return progress
    }
}

/// What a re-encryption does to a store, on either backend. A secret is any sealed value: an
/// item's secret, a KV version's data, a KV secret's custom metadata.
package protocol ReencryptingStore: Sendable {
    /// How many stored secrets are sealed under a term older than `term`. Needs no key.
    func countSecrets(olderThan term: UInt32) throws -> Int
    /// Re-seals up to `limit` secrets sealed under a term older than `term` with the current
    /// term, in one transaction: items' in `seq` order after `afterSeq`, then the KV values (a
    /// value re-sealed leaves the selection, so they need no cursor). Returns the last item `seq`
    /// visited (`afterSeq` once items are done) and how many were re-sealed, or nil when none is left.
    func reencryptBatch(olderThan term: UInt32, after afterSeq: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)?
    /// Retires the terms older than `term` that seal nothing any more; returns them.
    func retireTerms(olderThan term: UInt32) throws -> [UInt32]
}

/// One background re-encryption: batches of `reencryptBatch` until none is left, the vault is
/// locked or closed, or it is cancelled by a newer job.
final class ReencryptionJob: Sendable {
    private let state: Mutex<ReencryptionProgress>
    private let cancelled = Atomic<Bool>(false)

    init(targetTerm: UInt32) {
        state = Mutex(ReencryptionProgress(state: .running, targetTerm: targetTerm, total: 0, done: 0))
    }

    var progress: ReencryptionProgress { state.withLock { $0 } }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    func run(store: any ReencryptingStore, batchSize: Int, logger: Logger) {
        let term = progress.targetTerm
        do {
            let total = try store.countSecrets(olderThan: term)
            state.withLock { $0.total = total }
            logger.info("re-encryption started", metadata: ["term": "\(term)", "secrets": "\(total)"])
            var after: Int64 = 0
            while !cancelled.load(ordering: .relaxed) {
                guard let (last, count) = try store.reencryptBatch(olderThan: term, after: after, limit: batchSize)
                else {
                    let retired = try store.retireTerms(olderThan: term)
                    state.withLock { $0.state = .finished }
                    logger.info(
                        "re-encryption finished",
                        metadata: ["term": "\(term)", "secrets": "\(progress.done)", "retiredTerms": "\(retired)"])
                    return
                }
                after = last
                state.withLock { $0.done += count }
            }
            state.withLock { $0.state = .interrupted }
        } catch {
            state.withLock { $0.state = .interrupted }
            logger.warning("re-encryption interrupted", metadata: ["term": "\(term)", "reason": "\(error)"])
        }
    }
}
