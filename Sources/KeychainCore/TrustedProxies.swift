#if canImport(Glibc)
import Glibc
#endif

/// The proxies whose `X-Forwarded-For` is believed (`server.trustedProxies`), and the client
/// address that follows from it. Every per-address limit and audit line counts by the client, so
/// behind a proxy they must not all fall on the proxy; yet anyone can write the header, so it is
/// read only from peers listed here, and only as far as listed proxies vouch for it: right to
/// left, the first entry that is not a trusted proxy is the client (an entry further left is
/// whatever that client sent). Empty (the default): the header is ignored.
public struct TrustedProxies: Sendable, Equatable {
    public let networks: [Network]

    public init(_ networks: [Network] = []) { self.networks = networks }

    /// `X-Forwarded-For` entries looked at, from the right, at most: one per proxy hop is plenty,
    /// and a long header costs no more than this.
    static let maxEntries = 32

    /// An IPv4 or IPv6 CIDR (`10.0.0.0/8`, `fd00::/8`; a bare address is /32 or /128).
    public struct Network: Sendable, Equatable, CustomStringConvertible {
        let prefix: IPAddress
        /// Leading bits that must match, counted on the IPv6 form (an IPv4 /8 is 104).
        let bits: Int
        public let description: String

        /// Nil unless `text` is an address, optionally followed by `/` and a prefix length of at
        /// most 32 (IPv4) or 128 (IPv6). Bits past the prefix are ignored (`10.1.2.3/8` is `10.0.0.0/8`).
        public init?(cidr text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddress(String(parts[0])) else { return nil }
            let width = address.width
            var length = width
            if parts.count == 2 {
                let digits = parts[1].utf8
                guard digits.count <= 3, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    let parsed = Int(parts[1]), parsed <= width
                else { return nil }
                length = parsed
            }
            bits = 128 - width + length
            prefix = address
            description = text
        }

        func contains(_ address: IPAddress) -> Bool { (address.value ^ prefix.value) >> (128 - bits) == 0 }
    }

    /// Whether `address` is one of the trusted proxies.
    func contains(_ address: IPAddress) -> Bool { networks.contains { $0.contains(address) } }

    /// The client's address for a request from `peer` with these headers (lower-cased names):
    /// `peer` unless it is a trusted proxy; then the rightmost `X-Forwarded-For` entry (over all
    /// the header's lines, in order) that is not one, or the leftmost when all are. An entry that
    /// is not an IP address (`unknown`, with a port, garbage) ends the walk: the hop to its right,
    /// which a trusted proxy vouched for, is the client.
    public func clientAddress(peer: String?, headers: [(name: String, value: String)]) -> String? {
        guard !networks.isEmpty, let peer, let peerAddress = IPAddress(peer), contains(peerAddress) else { return peer }
        var client = peer
        var looked = 0
        for header in headers.reversed() where header.name == "x-forwarded-for" {
            // Empty list elements are no entries (RFC 9110 §5.6.1).
            for entry in header.value.split(separator: ",").reversed() {
                let text = entry.trimmed()
                if text.isEmpty { continue }
                guard looked < Self.maxEntries, let address = IPAddress(text) else { return client }
                looked += 1
                client = text
                if !contains(address) { return client }
            }
        }
        return client
    }
}

/// An IPv4 or IPv6 address as 128 bits, IPv4 in its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so
/// that a peer an IPv6 socket reports as mapped matches the IPv4 CIDRs.
struct IPAddress: Equatable {
    let value: UInt128
    /// The literal's bits: 32 for IPv4, 128 for IPv6 (a CIDR's longest prefix).
    let width: Int

    /// Nil unless `text` is a literal `inet_pton` reads: dotted-quad IPv4 or textual IPv6, with no
    /// port, brackets or zone.
    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            value = UInt128(0xFFFF) << 32 | UInt128(UInt32(bigEndian: v4.s_addr))
            width = 32
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        value = withUnsafeBytes(of: v6) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
        width = 128
    }
}

extension Substring {
    fileprivate func trimmed() -> String {
        var view = self
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
