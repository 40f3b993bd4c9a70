import KeychainCore

/// Recently computed audit tags, in a fixed table with one slot per hash bucket (direct-mapped):
/// a new tag replaces whatever shared its slot.
///
/// Requests repeat a few values (a service's token fetches), which this answers without an HMAC
/// (~0.2 µs of a token fetch against ~0.5 µs; `perf`, docs/benchmarks.md, "Scale"). Values seen
/// once (random reads over a large vault) must cost next to nothing: natively an HMAC is cheap,
/// and what cost was the memo itself, each new tag replacing a cold entry whose release missed
/// the cache. So a tag is kept from its message's second miss (a `Doorkeeper`), and the hashes
/// are a plain array apart from the entries: a value seen once reads two integers and no entry.
/// A lookup hashes the message before the lock; a store swaps one slot and releases the old
/// entry after the lock.
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
        let message: [UInt8]
        let tag: String
    }

    /// Slot `i` holds `entries[i]`, whose message hashes to `hashes[i]` (0 while empty: a message
    /// hashing to 0 then finds no entry and misses, as it should).
    private struct Slots {
        var hashes: [Int]
        var entries: [Entry?]
        var doorkeeper: Doorkeeper
    }

    private let slots: PThreadLocked<Slots>
    private let mask: Int

    /// `slots` is rounded up to a power of two.
    init(slots: Int = 4096) {
        var count = 1
        while count < slots { count <<= 1 }
        self.slots = PThreadLocked(
            Slots(
                hashes: [Int](repeating: 0, count: count), entries: [Entry?](repeating: nil, count: count),
                doorkeeper: Doorkeeper(slots: count)))
        mask = count - 1
    }

    func tag(for message: Message) -> String? {
        let index = message.hash & mask
        return slots.withLock { slots in
            guard slots.hashes[index] == message.hash, let entry = slots.entries[index], entry.message == message.bytes
            else { return nil }
            return entry.tag
        }
    }

    /// Keeps `tag` if `message` missed before (the doorkeeper admits it); otherwise notes the miss.
    func remember(_ tag: String, for message: Message) {
        let index = message.hash & mask
        // The replaced entry is moved out and released after the lock, not under it.
        var replaced: Entry?
        slots.withLock { slots in
            guard slots.doorkeeper.admits(message.hash) else { return }
            replaced = Entry(message: message.bytes, tag: tag)
            slots.hashes[index] = message.hash
            swap(&replaced, &slots.entries[index])
        }
    }
}
