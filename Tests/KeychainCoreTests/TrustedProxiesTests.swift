import Testing

@testable import KeychainCore

/// `server.trustedProxies`: which CIDRs parse, and which address a request's client is.
struct TrustedProxiesTests {
    func proxies(_ cidrs: String...) throws -> TrustedProxies {
        TrustedProxies(try cidrs.map { try #require(TrustedProxies.Network(cidr: $0), "\($0)") })
    }

    func forwarded(_ values: String...) -> [(name: String, value: String)] {
        values.map { (name: "x-forwarded-for", value: $0) }
    }

    @Test(arguments: [
        "10.0.0.0/8", "127.0.0.1/32", "0.0.0.0/0", "192.168.1.7", "::1/128", "fd00::/8", "::/0", "2001:db8::1",
        "::ffff:10.0.0.0/104", "10.1.2.3/8",
    ])
    func cidrsParse(text: String) {
        #expect(TrustedProxies.Network(cidr: text)?.description == text)
    }

    @Test(arguments: [
        "", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0/8",
        "010.0.0.1", "10.0.0.0 /8", "10.0.0.0/0008", "[::1]/128", "fe80::1%eth0", "localhost", "unknown", "1.2.3.4:80",
    ])
    func badCIDRsAreRefused(text: String) {
        #expect(TrustedProxies.Network(cidr: text) == nil)
    }

    @Test func aPrefixMatchesItsNetworkOnly() throws {
        let trusted = try proxies("10.0.0.0/8", "fd00::/8", "192.0.2.1")
        let forwarded = forwarded("203.0.113.9")
        for peer in ["10.255.0.1", "fd12::3", "192.0.2.1", "::ffff:10.1.1.1"] {
            #expect(trusted.clientAddress(peer: peer, headers: forwarded) == "203.0.113.9", "\(peer)")
        }
        for peer in ["11.0.0.1", "fe00::1", "192.0.2.2", "::ffff:11.0.0.1", "::10.1.1.1"] {
            #expect(trusted.clientAddress(peer: peer, headers: forwarded) == peer, "\(peer)")
        }
    }

    @Test func zeroLengthPrefixesTrustTheirWholeFamily() throws {
        #expect(try proxies("0.0.0.0/0").clientAddress(peer: "198.51.100.1", headers: forwarded("203.0.113.9")) == "203.0.113.9")
        #expect(try proxies("0.0.0.0/0").clientAddress(peer: "2001:db8::1", headers: forwarded("203.0.113.9")) == "2001:db8::1")
        #expect(try proxies("::/0").clientAddress(peer: "2001:db8::1", headers: forwarded("203.0.113.9")) == "203.0.113.9")
    }

    @Test func withoutTrustedProxiesTheHeaderIsIgnored() {
        #expect(TrustedProxies().clientAddress(peer: "127.0.0.1", headers: forwarded("203.0.113.9")) == "127.0.0.1")
        #expect(TrustedProxies().clientAddress(peer: nil, headers: forwarded("203.0.113.9")) == nil)
    }

    @Test func fromAnUntrustedPeerTheHeaderIsIgnored() throws {
        let trusted = try proxies("10.0.0.0/8")
        #expect(trusted.clientAddress(peer: "198.51.100.7", headers: forwarded("10.0.0.1, 203.0.113.9")) == "198.51.100.7")
        #expect(trusted.clientAddress(peer: nil, headers: forwarded("203.0.113.9")) == nil)
    }

    @Test func spoofedLeftmostEntriesAreIgnored() throws {
        let trusted = try proxies("127.0.0.1/32")
        #expect(trusted.clientAddress(peer: "127.0.0.1", headers: forwarded("6.6.6.6, 203.0.113.9")) == "203.0.113.9")
    }

    @Test func trustedHopsAreSkipped() throws {
        let trusted = try proxies("10.0.0.0/8", "fd00::/8")
        let headers = forwarded("6.6.6.6, 2001:db8::7 , 10.0.0.3,fd00::2,\t10.0.0.2")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: headers) == "2001:db8::7")
    }

    @Test func whenEveryEntryIsTrustedTheLeftmostIsTheClient() throws {
        let trusted = try proxies("10.0.0.0/8")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: forwarded("10.0.0.9, 10.0.0.2")) == "10.0.0.9")
    }

    @Test func noHeaderLeavesThePeer() throws {
        let trusted = try proxies("10.0.0.0/8")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: []) == "10.0.0.1")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: forwarded("")) == "10.0.0.1")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: [(name: "forwarded", value: "for=1.2.3.4")]) == "10.0.0.1")
    }

    @Test(arguments: [
        ("unknown", "10.0.0.1"), ("203.0.113.9:4711", "10.0.0.1"), ("[2001:db8::7]", "10.0.0.1"),
        ("garbage, 10.0.0.2", "10.0.0.2"), ("203.0.113.9, unknown, 10.0.0.2", "10.0.0.2"),
        ("203.0.113.9, 10.0.0.2 10.0.0.3", "10.0.0.1"), ("<script>", "10.0.0.1"),
        ("203.0.113.9,, 10.0.0.2,", "203.0.113.9"),
    ])
    func anEntryThatIsNoAddressEndsTheWalkAtTheLastTrustedHop(header: String, client: String) throws {
        let trusted = try proxies("10.0.0.0/8")
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: forwarded(header)) == client)
    }

    @Test func everyHeaderLineCountsInOrder() throws {
        let trusted = try proxies("10.0.0.0/8")
        let headers = [
            (name: "x-forwarded-for", value: "6.6.6.6, 203.0.113.9"), (name: "accept", value: "*/*"),
            (name: "x-forwarded-for", value: "10.0.0.3"),
        ]
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: headers) == "203.0.113.9")
        let untrustedLast = headers + [(name: "x-forwarded-for", value: "198.51.100.7")]
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: untrustedLast) == "198.51.100.7")
    }

    @Test func theWalkIsBounded() throws {
        let trusted = try proxies("10.0.0.0/8")
        let hops = (1...40).map { "10.0.0.\($0)" }
        let header = "203.0.113.9, " + hops.joined(separator: ", ")
        // 32 entries from the right: the last trusted hop reached stands for the client.
        #expect(trusted.clientAddress(peer: "10.0.0.1", headers: forwarded(header)) == "10.0.0.9")
        #expect(TrustedProxies.maxEntries == 32)
    }
}
