import KeychainCore

/// Which access group a Vault path's first segment names for its caller (docs/api.md, "Tools
/// written for Vault"): one of the caller's groups that is reachable as a mount, or with
/// `aliasEnabled`, `secret` for the caller's first group. Anything else is 403 `permission
/// denied`, whether such a group exists or not.
struct VaultMounts: Sendable {
    let aliasEnabled: Bool

    /// keychaind's own first path segments and Vault's, which no group can be a mount under.
    static let reserved: Set<String> = [
        "items", "tokens", "admin", "auth", "sys", "oauth", "connect", "health", "metrics", "v1", "cubbyhole", "identity",
    ]

    func group(_ context: RequestContext) throws -> String {
        let mount = context.parameters["mount"] ?? ""
        let client = context.caller
        if aliasEnabled, mount == "secret", let first = client.accessGroups.first, Self.isReachable(first) { return first }
        guard Self.isReachable(mount), client.accessGroups.containsExactly(mount) else {
            throw KeychainError.missingEntitlement("permission denied")
        }
        return mount
    }

    /// The secret the path names in the caller's mount.
    func key(_ context: RequestContext) throws -> KVSecretKey {
        KVSecretKey(group: try group(context), path: context.parameters["path"] ?? "")
    }

    /// Whether a group can be reached as a mount: no `/`, not reserved, not keychaind's own.
    static func isReachable(_ group: String) -> Bool {
        !group.isEmpty && !group.utf8.contains(UInt8(ascii: "/")) && !reserved.contains(group)
            && !group.utf8.starts(with: "keychaind.".utf8)
    }
}
