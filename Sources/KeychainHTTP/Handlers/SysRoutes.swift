public import Foundation
import KeychainAPI
public import KeychainCore

extension Router {
    /// Vault's `sys/` routes that its tools call before anything else (docs/api.md, "Tools written
    /// for Vault"), in Vault's shape: `GET /sys/health` (also `HEAD`), `/sys/seal-status` and
    /// `/sys/leader` open to all, counted in metrics and not audited as `/health` is; and, for a
    /// token, `GET /sys/internal/ui/mounts/{path*}` (and `/sys/mounts-all/{path*}`), which `bao kv`
    /// asks for a mount's KV version. A locked vault is a sealed one.
    public mutating func addSysRoutes(
        isLocked: @escaping @Sendable () -> Bool, storage: @escaping @Sendable () -> StorageHealth, clusterID: String,
        secretMountAlias: Bool, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        @Sendable func state() -> VaultNodeState {
            VaultNodeState(sealed: isLocked(), storage: storage(), clusterID: clusterID)
        }
        add(.get, "/sys/health", access: .open, audit: .unaudited, surface: .vault) { context in
            let state = state()
            guard let status = VaultHealthCodes(context.request.queryItems)?.status(for: state) else {
                // OpenBao's answer to any bad value: 400 with no message.
                return .json(status: 400, VaultErrors([]))
            }
            var answer = HTTPResponse.json(status: status, VaultSysAnswer.health(state, now: clock()))
            if status == 204 || status == 304 { answer.body = [] }
            return answer
        }
        add(.get, "/sys/seal-status", access: .open, audit: .unaudited, surface: .vault) { _ in
            .json(VaultSysAnswer.sealStatus(state()))
        }
        add(.get, "/sys/leader", access: .open, audit: .unaudited, surface: .vault) { _ in
            .json(VaultSysAnswer.leader)
        }
        for pattern in ["/sys/internal/ui/mounts/{path*}", "/sys/mounts-all/{path*}"] {
            add(.get, pattern, access: .client, audit: .pathParameters, surface: .vault) { context in
                // Sealed first, as OpenBao answers before it looks at the path.
                if isLocked() { throw KeychainError.interactionNotAllowed("the vault is locked") }
                let path = context.parameters["path"] ?? ""
                let first = String(decoding: path.utf8.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
                guard let group = VaultMount.resolve(firstSegment: first, client: context.caller, aliasEnabled: secretMountAlias)
                else {
                    // OpenBao's words to a valid token for a path under no mount it may use (the
                    // CLI prints them); the path as it names it, with one trailing `/`.
                    let named = path.hasSuffix("/") ? path : path + "/"
                    return .json(
                        status: 403,
                        VaultErrors([
                            "preflight capability check returned 403, please ensure client's policies grant access to path \"\(named)\""
                        ]))
                }
                return .json(VaultMountAnswer(path: first + "/", group: group, clusterID: clusterID).envelope)
            }
        }
    }
}

/// The status codes `sys/health` answers, with Vault's query overrides: `activecode` (200),
/// `sealedcode` (503), `standbycode` (429), `uninitcode` (501), each a decimal integer, and
/// `standbyok` a boolean as Go parses it. keychaind is never a standby nor uninitialised, but a
/// bad value of those is refused as OpenBao refuses it; `perfstandbyok`, `drsecondarycode` and
/// `performancestandbycode` are not read (OpenBao ignores them on a node in neither state). The
/// first of a repeated parameter counts, as in Go.
struct VaultHealthCodes {
    var active = 200
    var sealed = 503

    /// Nil when a value does not parse, or is a status libmicrohttpd cannot send (below 200 or
    /// above 999: OpenBao drops the connection instead).
    init?(_ query: [HTTPRequest.QueryItem]) {
        func first(_ name: String) -> String? { query.first { $0.name == name }?.value }
        if let standbyOK = first("standbyok"), !Self.goBooleans.contains(standbyOK) { return nil }
        for name in ["uninitcode", "standbycode", "sealedcode", "activecode"] {
            guard let text = first(name) else { continue }
            guard let code = Int(text), (200...999).contains(code) else { return nil }
            if name == "sealedcode" { sealed = code } else if name == "activecode" { active = code }
        }
    }

    /// The spellings Go's `strconv.ParseBool` accepts.
    static let goBooleans: Set<String> = ["1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"]

    /// Sealed (locked): `sealedcode`. Storage unreachable: 503, which no override changes (Vault
    /// has no such state for a node that is unsealed). Else `activecode`.
    func status(for state: VaultNodeState) -> Int {
        if state.sealed { return sealed }
        return state.storage.reachable ? active : 503
    }
}
