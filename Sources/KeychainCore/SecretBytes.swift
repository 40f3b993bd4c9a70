#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes that must not outlive their use: item secrets, data keys, the master key, token material.
///
/// The storage is allocated once, locked in memory where the OS allows (`mlock`, so it is not
/// swapped out) and left out of core dumps (`MADV_DONTDUMP`), wiped with `explicit_bzero` (which
/// the compiler may not elide, like `OPENSSL_cleanse`) when the value is released, and never
/// printed: `description` is redacted. Locked storage is whole pages of its own: both calls
/// act on pages, and undoing them on release must not unlock or re-expose another allocation
/// that shares a page.
/// Equality is constant-time in the contents. Not Sendable-by-copy: it is a reference whose
/// bytes are immutable after creation, which is why `@unchecked Sendable` is sound here.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// At least one byte, so that even an empty secret has an address to lock and wipe.
    private let storage: UnsafeMutableRawBufferPointer
    private let length: Int
    /// Whether the storage is whole pages, kept out of core dumps (and locked, if `isLocked`).
    private let isProtected: Bool
    private let isLocked: Bool

    public var count: Int { length }
    public var isEmpty: Bool { length == 0 }

    /// Copies `bytes`; the caller should wipe its own copy if it has one (see `wipe(_:)`).
    /// `lockedInMemory` as for `init(count:lockedInMemory:initializer:)`.
    public init<Bytes: Collection<UInt8>>(_ bytes: Bytes, lockedInMemory: Bool = true) {
        length = bytes.count
        (storage, isLocked) = Self.allocate(length, protected: lockedInMemory)
        isProtected = lockedInMemory
        UnsafeMutableRawBufferPointer(rebasing: storage[0..<length]).copyBytes(from: bytes)
    }

    /// Fills a new secret of `count` bytes in place, so the bytes never exist outside it.
    /// `lockedInMemory: false` skips `mlock` and `MADV_DONTDUMP` for secrets that only pass
    /// through a request (they are still wiped on release); keys keep the default.
    public init(
        count: Int, lockedInMemory: Bool = true, initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) rethrows {
        length = count
        (storage, isLocked) = Self.allocate(count, protected: lockedInMemory)
        isProtected = lockedInMemory
        do {
            try initializer(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
        } catch {
            explicit_bzero(storage.baseAddress!, storage.count)
            throw error
        }
    }

    /// The UTF-8 text of `string` as a secret.
    public convenience init(utf8 string: String, lockedInMemory: Bool = true) {
        var bytes = Array(string.utf8)
        self.init(bytes, lockedInMemory: lockedInMemory)
        SecretBytes.wipe(&bytes)
    }

    deinit {
        explicit_bzero(storage.baseAddress!, storage.count)
        if isLocked { munlock(storage.baseAddress, storage.count) }
        #if os(Linux)
        // Back to the heap's default, so the kernel can merge the pages' mapping again.
        if isProtected { _ = madvise(storage.baseAddress, storage.count, MADV_DODUMP) }
        #endif
        storage.deallocate()
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Zeroed storage for `count` bytes; when `protected`, whole pages of its own, left out of
    /// core dumps and locked in memory where the OS allows (the second value).
    private static func allocate(_ count: Int, protected: Bool) -> (UnsafeMutableRawBufferPointer, Bool) {
        guard protected else {
            let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
            storage.initializeMemory(as: UInt8.self, repeating: 0)
            return (storage, false)
        }
        let size = (Swift.max(count, 1) + pageSize - 1) / pageSize * pageSize
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: pageSize)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        #if os(Linux)
        _ = madvise(storage.baseAddress, size, MADV_DONTDUMP)
        #endif
        return (storage, mlock(storage.baseAddress, size) == 0)
    }

    /// Gives `body` read access to the bytes; the pointer must not escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<length]))
    }

    /// A copy as an array, for the edges that must hand bytes on (an HTTP response body).
    /// The caller owns the copy's lifetime.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    /// The bytes as UTF-8 text, or nil when they are not valid UTF-8.
    public func utf8String() -> String? { utf8String(after: "") }

    /// `prefix` followed by the bytes as UTF-8 text, made as one string (the secret's text is not
    /// copied into a string of its own first); nil when the bytes are not valid UTF-8.
    public func utf8String(after prefix: String) -> String? {
        withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard String.isValidUTF8(bytes) else { return nil }
            return prefix.withUTF8Bytes { head in
                String(unsafeUninitializedCapacity: head.count + bytes.count) { buffer in
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[..<head.count]).initialize(from: head)
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[head.count...]).initialize(from: bytes)
                    return head.count + bytes.count
                }
            }
        }
    }

    /// Compares in time that depends only on the lengths, never on where the bytes differ.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in constantTimeEqual(a, b) } }
    }

    public var description: String { "SecretBytes(\(length) bytes, redacted)" }
    public var debugDescription: String { description }

    /// Overwrites an array's bytes with zeros in a way the optimiser keeps.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
        }
    }
}

/// Constant-time equality of two byte sequences: the time depends on the lengths only.
public func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    constantTimeEqualBytes(a, b)
}

/// The comparison itself, generic so that a test can hand it collections that count their reads
/// (it must read every byte pair, wherever the first difference is); specialised for the raw
/// buffers above.
func constantTimeEqualBytes<A: RandomAccessCollection<UInt8>, B: RandomAccessCollection<UInt8>>(
    _ a: A, _ b: B
) -> Bool where A.Index == Int, B.Index == Int {
    var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
    let length = Swift.min(a.count, b.count)
    for offset in 0..<length {
        difference |= a[a.startIndex + offset] ^ b[b.startIndex + offset]
    }
    return difference == 0 && a.count == b.count
}

/// Constant-time equality of two byte arrays.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { x in b.withUnsafeBytes { y in constantTimeEqual(x, y) } }
}
