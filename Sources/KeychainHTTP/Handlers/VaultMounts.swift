import KeychainCore

/// The KV routes' mount (`VaultMount`) for a request: the caller's group the path's first
/// segment names, else 403 `permission denied` whether such a group exists or not.
struct VaultMounts: Sendable {
    let aliasEnabled: Bool

    func group(_ context: RequestContext) throws -> String {
        guard
            let group = VaultMount.resolve(
                firstSegment: context.parameters["mount"] ?? "", client: context.caller, aliasEnabled: aliasEnabled)
        else { throw KeychainError.missingEntitlement("permission denied") }
        return group
    }

    /// The secret the path names in the caller's mount.
    func key(_ context: RequestContext) throws -> KVSecretKey {
        KVSecretKey(group: try group(context), path: context.parameters["path"] ?? "")
    }
}
