import KeychainCore

/// Recently computed audit tags, in a fixed table with one slot per hash bucket (direct-mapped):
/// a new tag replaces whatever shared its slot.
///
/// Requests repeat a few values (a service's token fetches), which this answers without an HMAC.
/// Values seen once (random reads over a large vault) must cost next to nothing: the dictionary
/// this replaces spent more time probing and emptying itself at 1M items than the HMAC it saved
/// (docs/benchmarks.md). Here a lookup hashes the message before the lock and compares one slot;
/// a store swaps one slot and releases the old entry after the lock. The slot keeps the hash
/// inline, so a lookup that misses reads no entry's bytes: those are cold at 1M items, and
/// copying the entry out to compare it counted references on them (perf: 1 % of a read's samples).
final class AuditTagMemo: Sendable {
    /// `name ‖ 0x00 ‖ canonical value`: what is HMACed, with its hash taken once.
    struct Message {
        let bytes: [UInt8]
        let hash: Int

        init(_ name: String, _ canonical: [UInt8]) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(name.utf8.count + 1 + canonical.count)
            bytes.appendUTF8(name)
            bytes.append(0)
            bytes.append(contentsOf: canonical)
            self.bytes = bytes
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            hash = hasher.finalize()
        }
    }

    private struct Entry {
        let hash: Int
        let message: [UInt8]
        let tag: String
    }

    private let slots: PThreadLocked<[Entry?]>
    private let mask: Int

    /// `slots` is rounded up to a power of two.
    init(slots: Int = 4096) {
        var count = 1
        while count < slots { count <<= 1 }
        self.slots = PThreadLocked([Entry?](repeating: nil, count: count))
        mask = count - 1
    }

    func tag(for message: Message) -> String? {
        let index = message.hash & mask
        return slots.withLock { slots in
            guard slots[index]?.hash == message.hash, let entry = slots[index], entry.message == message.bytes else {
                return nil
            }
            return entry.tag
        }
    }

    func remember(_ tag: String, for message: Message) {
        let index = message.hash & mask
        // The replaced entry is returned so that it is released after the lock, not under it.
        _ = slots.withLock { slots in
            let replaced = slots[index]
            slots[index] = Entry(hash: message.hash, message: message.bytes, tag: tag)
            return replaced
        }
    }
}
