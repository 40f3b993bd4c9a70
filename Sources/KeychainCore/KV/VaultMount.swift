/// Which access group a Vault path's first segment names (docs/api.md, "Tools written for
/// Vault"): every access group is a KV version 2 mount of the same name, reachable by the clients
/// that hold it. One rule for every route of the Vault surface (the KV routes, the mounts lookup),
/// so that a path is reachable through all of them or through none.
public enum VaultMount {
    /// The mount `vault.secretMountAlias` makes the caller's first access group: Vault tools
    /// default to `secret/`.
    public static let alias = "secret"

    /// keychaind's own first path segments and Vault's built-in mounts: a group of one of these
    /// names would be shadowed by (or shadow) a route, so it is no mount.
    static let reservedNames = [
        "items", "tokens", "admin", "auth", "sys", "oauth", "connect", "health", "metrics", "v1",
        "cubbyhole", "identity",
    ]

    /// Whether `group` can be reached as a mount: one path segment (no `/`), none of
    /// `reservedNames`, not one of keychaind's own (`keychaind.`). Its items stay reachable
    /// through the native routes either way.
    public static func isReachable(_ group: String) -> Bool {
        !group.isEmpty && !group.utf8.contains(UInt8(ascii: "/")) && !group.hasPrefix("keychaind.")
            && !reservedNames.contains { $0.hasSameUTF8(as: group) }
    }

    /// The access group the mount `firstSegment` names for `client`, or nil when it names none
    /// the client may reach (answered 403 whether or not the group exists, so that nothing tells
    /// a caller which groups others hold). A group the client holds is itself; with
    /// `aliasEnabled`, `secret` (when the client holds no group of that name) is the client's
    /// first group. Names compare byte for byte, as access groups always do.
    public static func resolve(firstSegment: String, client: Client, aliasEnabled: Bool) -> String? {
        if let held = client.accessGroups.first(where: { $0.hasSameUTF8(as: firstSegment) }) {
            return isReachable(held) ? held : nil
        }
        guard aliasEnabled, firstSegment.hasSameUTF8(as: alias), let first = client.accessGroups.first else { return nil }
        return isReachable(first) ? first : nil
    }
}
