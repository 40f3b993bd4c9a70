/// What a store's group commit has done since start (for metrics): how many commits it made, how
/// many writes they carried, and how many commits carried how many writes. Writes that arrive
/// together share one transaction and one fsync, so `writes / commits` is the mean batch size.
/// Also the writes queued at the moment it was read.
public struct CommitStatistics: Sendable, Equatable {
    /// The upper bounds of the batch-size buckets (a commit of `n` writes falls in the first bucket
    /// whose bound is at least `n`; larger ones only in the total).
    public static let batchSizeBounds = [1, 2, 4, 8, 16, 32, 64]

    /// Commits attempted (a batch that failed to commit counts too).
    public var commits: UInt64 = 0
    /// Writes in those commits, succeeded or failed.
    public var writes: UInt64 = 0
    /// Commits per bucket of `batchSizeBounds`, not cumulative.
    public var commitsByBatchSize = [UInt64](repeating: 0, count: CommitStatistics.batchSizeBounds.count)
    /// Writes waiting for a batch to take them when the statistics were read (not those of the
    /// batch being committed).
    public var queued = 0

    public init() {}

    /// Counts one commit of `size` writes.
    public mutating func record(batchOf size: Int) {
        commits += 1
        writes += UInt64(size)
        if let bucket = Self.batchSizeBounds.firstIndex(where: { size <= $0 }) { commitsByBatchSize[bucket] += 1 }
    }
}
