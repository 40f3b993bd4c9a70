import Foundation
import KeychainCore
import Testing

/// The rule naming the Vault surface's mounts: a caller's own groups, the reserved names, the alias.
struct VaultMountTests {
    func client(_ groups: [String]) -> Client {
        Client(name: "app", accessGroups: groups, role: .client, createdAt: Date())
    }

    @Test func aCallersOwnGroupIsItsMount() {
        let caller = client(["team-a", "team-b"])
        #expect(VaultMount.resolve(firstSegment: "team-b", client: caller, aliasEnabled: false) == "team-b")
        #expect(VaultMount.resolve(firstSegment: "team-c", client: caller, aliasEnabled: false) == nil)
        #expect(VaultMount.resolve(firstSegment: "Team-a", client: caller, aliasEnabled: false) == nil)
    }

    @Test(arguments: [
        "items", "tokens", "admin", "auth", "sys", "oauth", "connect", "health", "metrics", "v1", "cubbyhole",
        "identity", "a/b", "keychaind.refresh",
    ])
    func unreachableGroups(_ group: String) {
        #expect(!VaultMount.isReachable(group))
        #expect(VaultMount.resolve(firstSegment: group, client: client([group]), aliasEnabled: true) == nil)
    }

    @Test func namesCompareByTheirBytes() {
        // "é" composed (NFC) and decomposed: equal as Swift Strings, two groups for keychaind.
        let caller = client(["caf\u{E9}"])
        #expect(VaultMount.resolve(firstSegment: "cafe\u{301}", client: caller, aliasEnabled: false) == nil)
        #expect(VaultMount.resolve(firstSegment: "caf\u{E9}", client: caller, aliasEnabled: false) == "caf\u{E9}")
    }

    @Test func theAliasIsTheFirstGroupWhenOn() {
        let caller = client(["team-a", "team-b"])
        #expect(VaultMount.resolve(firstSegment: "secret", client: caller, aliasEnabled: false) == nil)
        #expect(VaultMount.resolve(firstSegment: "secret", client: caller, aliasEnabled: true) == "team-a")
        // A group named `secret` the caller holds is itself.
        #expect(VaultMount.resolve(firstSegment: "secret", client: client(["a", "secret"]), aliasEnabled: true) == "secret")
        // A first group that is no mount is not reached through the alias either.
        #expect(VaultMount.resolve(firstSegment: "secret", client: client(["sys", "b"]), aliasEnabled: true) == nil)
    }
}
