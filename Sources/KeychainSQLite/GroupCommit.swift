import Dispatch
import KeychainConcurrency
import KeychainCore
import KeychainStore

/// Group commit for the writer: writes that arrive together are committed together, one
/// transaction and one fsync for the lot (docs/decisions.md, "Group commit").
///
/// Leader and followers, no timer: a write that finds no batch in flight leads at once (a lone
/// writer commits without waiting for company); writes that arrive while a batch is committing
/// queue up. When a batch is over, its leader wakes its writes and hands the lead to the first
/// write queued, which takes every write queued (at most `maxBatch`) as the next batch. A write
/// returns only once its batch's commit is over, so none is acknowledged before it is durable.
///
/// What a batch means (savepoints, outcomes) is the `commit` function's business: this type
/// only forms the batches, runs `commit` on the leader's thread and counts them.
final class GroupCommit<Work>: Sendable {
    /// One write in the queue: its work, and how it ended (set by its batch's leader).
    final class Write {
        /// Dropped once the batch is over: a caller may hand in a closure that must not outlive
        /// its call (`withoutActuallyEscaping`), and other writes of its batch live on.
        fileprivate(set) var work: Work?
        /// The write's error, nil when it committed. Set by `commit` before the batch is over.
        var failure: (any Error)?
        fileprivate var stage = Stage.queued
        /// Signalled once, when the write's stage leaves `queued`: each write is woken alone,
        /// not every waiting write at each batch's end (the writes queued for the next batch
        /// would wake only to wait again, all contending for the queue's lock).
        fileprivate let woken = DispatchSemaphore(value: 0)

        fileprivate init(_ work: Work) { self.work = work }
    }

    fileprivate enum Stage {
        case queued
        /// First in the queue when the batch before ended: commits the next batch.
        case leading
        /// Its batch's commit is over.
        case done
    }

    private struct Queue {
        var waiting: [Write] = []
        /// A batch is being committed (or its leader is about to take it).
        var leading = false
        var statistics = CommitStatistics()
    }

    /// The most writes one transaction carries: bounds how long a batch holds the writer, and so
    /// the wait of the writes queued behind it.
    let maxBatch: Int
    private let queue = PThreadLocked(Queue())

    init(maxBatch: Int = 64) {
        precondition(maxBatch > 0)
        self.maxBatch = maxBatch
    }

    /// Runs `work` in a batch and returns its error (nil: committed) once its batch's commit is
    /// over. `commit` is called on the leader's thread with the batch, in arrival order, and must
    /// set each write's `failure` when it did not commit.
    func submit(_ work: Work, commit: ([Write]) -> Void) -> (any Error)? {
        let write = Write(work)
        let leads = queue.withLock { queue -> Bool in
            queue.waiting.append(write)
            if queue.leading { return false }
            queue.leading = true
            return true
        }
        if !leads {
            write.woken.wait()
            if queue.withLock({ _ in write.stage }) == .done { return write.failure }
        }
        // Leading: this write is first in the queue, so it is in the batch.
        let batch = queue.withLock { queue in
            let batch = Array(queue.waiting.prefix(maxBatch))
            queue.waiting.removeFirst(batch.count)
            return batch
        }
        commit(batch)
        let nextLeader = queue.withLock { queue -> Write? in
            for member in batch {
                member.work = nil
                member.stage = .done
            }
            queue.statistics.record(batchOf: batch.count)
            guard let next = queue.waiting.first else {
                queue.leading = false
                return nil
            }
            next.stage = .leading
            return next
        }
        nextLeader?.woken.signal()
        for member in batch where member !== write { member.woken.signal() }
        return write.failure
    }

    /// What has been committed since start, and the writes queued now.
    var statistics: CommitStatistics {
        queue.withLock { queue in
            var statistics = queue.statistics
            statistics.queued = queue.waiting.count
            return statistics
        }
    }
}
