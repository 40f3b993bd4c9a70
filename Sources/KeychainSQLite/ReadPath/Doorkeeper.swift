import KeychainStore

/// The hashes of recent misses, one per slot (TinyLFU's "doorkeeper"): a cache asks it before
/// keeping something it missed, and keeps it only from the second miss. Things asked for once
/// (reads spread over a large vault) then pass without filling the cache and pushing out what
/// comes back; a thing asked for again (a service's token fetch) is kept from its second miss.
/// A collision only delays or hastens keeping something; it never changes what a cache answers.
struct Doorkeeper: Sendable {
    private var recentMisses: [Int]
    private let mask: Int

    /// At least `slots` slots (rounded up to a power of two).
    init(slots: Int) {
        var count = 1
        while count < slots { count <<= 1 }
        recentMisses = [Int](repeating: 0, count: count)
        mask = count - 1
    }

    /// Whether what hashes to `hash` missed last time in its slot; if not, notes this miss.
    mutating func admits(_ hash: Int) -> Bool {
        let slot = hash & mask
        if recentMisses[slot] == hash { return true }
        recentMisses[slot] = hash
        return false
    }
}
