#if canImport(Glibc)
import Glibc
#endif
import KeychainConcurrency

/// The random bits of the Vault surface's request ids, from a pool of random bytes per thread
/// filled 4 KiB at a time from the kernel's generator (`/dev/urandom`): taking each id's 16 bytes
/// from `SystemRandomNumberGenerator` made two `getrandom` calls per answer, about 4 % of a KV
/// read's CPU (perf). Request ids are not secrets, only unique and unpredictable.
enum RequestIDs {
    private final class Pool: @unchecked Sendable {
        // @unchecked: each pool is used by one thread only (`PerThread`).
        static let size = 4096
        var bytes = [UInt8](repeating: 0, count: size)
        var used = size
    }

    private static let pools = PerThread { Pool() }

    #if canImport(Glibc)
    /// Opened once; -1 when it cannot be (then every id draws from `SystemRandomNumberGenerator`).
    private static let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    #endif

    /// 128 random bits.
    static func next() -> (UInt64, UInt64) {
        let pool = pools.current
        if pool.used + 16 > Pool.size, !refill(pool) {
            var generator = SystemRandomNumberGenerator()
            return (generator.next(), generator.next())
        }
        defer { pool.used += 16 }
        return pool.bytes.withUnsafeBytes { bytes in
            (bytes.loadUnaligned(fromByteOffset: pool.used, as: UInt64.self),
             bytes.loadUnaligned(fromByteOffset: pool.used + 8, as: UInt64.self))
        }
    }

    /// Fills `pool` from the kernel; false when that failed.
    private static func refill(_ pool: Pool) -> Bool {
        #if canImport(Glibc)
        guard urandom >= 0 else { return false }
        let count = pool.bytes.withUnsafeMutableBytes { read(urandom, $0.baseAddress, Pool.size) }
        guard count == Pool.size else { return false }
        pool.used = 0
        return true
        #else
        return false
        #endif
    }
}
