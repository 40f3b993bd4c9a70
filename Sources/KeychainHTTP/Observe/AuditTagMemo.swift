import KeychainCore

/// Recently computed audit tags, in a fixed table with one slot per hash bucket (direct-mapped):
/// a new tag replaces whatever shared its slot.
///
/// Requests repeat a few values (a service's token fetches), which this answers without an HMAC
/// (a remembered tag cost ~0.2 µs of a token fetch, an HMAC ~0.5 µs; `perf`, docs/benchmarks.md).
/// Values seen once (random reads over a large vault) must cost next to nothing, and an HMAC is
/// cheap natively (SHA-256 on the CPU's SHA extensions): what cost was the memo itself, each new
/// tag replacing a cold entry whose release missed the cache (1.6–2.1 µs per 1M-item read with
/// two tags, against 0.9 µs with no memo at all). So a tag is kept from the second time its
/// message comes, not the first: a table of recent misses' hashes (a "doorkeeper", as in the find
/// cache) lets values seen once pass without touching an entry. The hashes are plain arrays
/// apart from the entries, so a lookup that misses reads one integer of each and no entry.
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
    /// hashing to 0 then finds no entry and misses, as it should), and `recentMisses[i]` the hash
    /// of the last message that missed there and was not kept.
    private struct Slots {
        var hashes: [Int]
        var entries: [Entry?]
        var recentMisses: [Int]
    }

    private let slots: PThreadLocked<Slots>
    private let mask: Int

    /// `slots` is rounded up to a power of two.
    init(slots: Int = 4096) {
        var count = 1
        while count < slots { count <<= 1 }
        let empty = [Int](repeating: 0, count: count)
        self.slots = PThreadLocked(
            Slots(hashes: empty, entries: [Entry?](repeating: nil, count: count), recentMisses: empty))
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

    /// Keeps `tag` if `message` missed here before (its hash is the slot's recent miss);
    /// otherwise only notes the miss.
    func remember(_ tag: String, for message: Message) {
        let index = message.hash & mask
        // The replaced entry is moved out and released after the lock, not under it.
        var replaced: Entry?
        slots.withLock { slots in
            guard slots.recentMisses[index] == message.hash else {
                slots.recentMisses[index] = message.hash
                return
            }
            replaced = Entry(message: message.bytes, tag: tag)
            slots.hashes[index] = message.hash
            swap(&replaced, &slots.entries[index])
        }
    }
}
