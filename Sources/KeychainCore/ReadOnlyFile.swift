#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An open file descriptor for reading, with the file's size, owned by this value: closed when
/// the value is released, unless `takeDescriptor()` handed it to a new owner first. Lets a
/// storage layer pass a file (a sealed backup, already unlinked) to the transport, which sends
/// it without holding it in memory.
public final class ReadOnlyFile: Sendable {
    /// The file's size in bytes, as it was when it was opened.
    public let size: UInt64
    /// The descriptor, or -1 once handed over.
    private let descriptor: Atomic<Int32>

    /// Takes ownership of `descriptor` (open for reading, `size` bytes long).
    public init(descriptor: Int32, size: UInt64) {
        self.descriptor = Atomic(descriptor)
        self.size = size
    }

    /// The descriptor, for its new owner, who closes it; nil once taken.
    public func takeDescriptor() -> Int32? {
        let taken = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        return taken >= 0 ? taken : nil
    }

    deinit {
        let remaining = descriptor.load(ordering: .acquiring)
        if remaining >= 0 { close(remaining) }
    }
}
