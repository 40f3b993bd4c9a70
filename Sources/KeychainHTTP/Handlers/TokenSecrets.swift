import Foundation
import KeychainAPI
import KeychainCore

/// A service's tokens as a KV secret at `<mount>/data/tokens/<service>` (or
/// `tokens/<service>/<user>`), docs/api.md "Tools written for Vault": read as `/authorization`
/// reads them (refreshed first when due), written as `PUT /v1/tokens/{service}` writes them,
/// listed; never versioned, deleted or given metadata here.
struct TokenSecrets: Sendable {
    let tokens: TokenService

    /// The lead-in an agent gets when no refresh setting says how early to renew.
    static let defaultRefreshBefore = 60
    static let notVersioned = KeychainError.param("tokens/ paths are not versioned")

    /// The tokens a KV path names; nil for a path outside `tokens/`.
    static func naming(_ key: KVSecretKey) throws -> TokenNaming? {
        guard key.path.utf8.starts(with: "tokens/".utf8) else {
            if key.path.hasSameUTF8(as: "tokens") { throw KeychainError.itemNotFound() }
            return nil
        }
        let parts = key.path.dropFirst("tokens/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts.contains(where: \.isEmpty) else { throw KeychainError.itemNotFound() }
        return TokenNaming(service: String(parts[0]), user: parts.count == 2 ? String(parts[1]) : nil, accessGroup: key.group)
    }

    /// 400 for a versioning operation on a `tokens/` path.
    static func refuseVersioning(_ key: KVSecretKey) throws {
        if key.path.hasSameUTF8(as: "tokens") || key.path.utf8.starts(with: "tokens/".utf8) { throw notVersioned }
    }

    func read(_ naming: TokenNaming, context: RequestContext) throws -> HTTPResponse {
        let stored = try tokens.tokens(naming, client: context.caller, wait: context.exchangeWait, answeringStored: false)
        let now = tokens.items.clock()
        var lease = 0
        if let expiresAt = stored.expiresAt {
            let due = expiresAt.addingTimeInterval(-Double(stored.refreshBefore ?? Self.defaultRefreshBefore))
            lease = max(1, Int(due.timeIntervalSince(now).rounded(.down)))
        }
        let version = KVVersion(number: stored.version ?? 1, createdTime: stored.storedAt ?? now, data: nil)
        return .json(
            VaultEnvelope(leaseDuration: lease) { writer in
                writer.key("data")
                writer.object { data in
                    data.member("access_token", stored.accessToken)
                    data.member("authorization", "Bearer " + stored.accessToken)
                    data.member("expires_at", stored.expiresAt)
                    if let refreshToken = stored.refreshToken { data.member("refresh_token", refreshToken) }
                }
                writer.key("metadata")
                writer.object { KVAnswer.versionMetadata(version, custom: [:], into: &$0) }
            })
    }

    func write(_ naming: TokenNaming, context: RequestContext) throws -> HTTPResponse {
        let update = try Self.update(context.request.body, now: tokens.items.clock())
        let saved = try tokens.save(update, naming: naming, client: context.caller)
        let now = tokens.items.clock()
        let version = KVVersion(number: saved.version, createdTime: now, data: nil)
        return .json(VaultEnvelope { KVAnswer.versionMetadata(version, custom: [:], into: &$0) })
    }

    /// `{"data":{"access_token", "refresh_token"?, "expires_in"? | "expires_at"?}}`; any other key
    /// is errSecParam, and so is any option (`options.cas`: not versioned).
    static func update(_ body: [UInt8], now: Date) throws -> TokenUpdate {
        var data: [(String, JSONValue)]?
        for (name, value) in try KVRequest.members(body) {
            switch name {
            case "data":
                guard case .object(let members) = value else { throw KeychainError.param("no data provided") }
                data = members
            case "options":
                // Vault's tools send `"options":{}` with every write; only check-and-set is refused.
                guard case .object(let options) = value else { throw KeychainError.param("options must be an object") }
                if !options.isEmpty { throw notVersioned }
            default: throw KeychainError.param("unknown key \"\(name)\"; a tokens/ write takes data")
            }
        }
        guard let data else { throw KeychainError.param("no data provided") }
        var members: [(String, JSONValue)] = []
        for (name, value) in data {
            switch name {
            case "access_token": members.append(("accessToken", value))
            case "refresh_token": members.append(("refreshToken", value))
            case "expires_at": members.append(("expiresAt", value))
            case "expires_in":
                switch value {
                case .string(let text):
                    guard let seconds = Double(text), seconds.isFinite, seconds >= 1, seconds <= Double(Int64.max / 2) else {
                        throw KeychainError.param("\"expires_in\" must be a number of seconds")
                    }
                    members.append(("expiresIn", .integer(Int64(seconds))))
                case .number(let seconds) where seconds.isFinite && seconds >= 1 && seconds <= Double(Int64.max / 2):
                    members.append(("expiresIn", .integer(Int64(seconds))))
                default: members.append(("expiresIn", value))
                }
            default:
                throw KeychainError.param(
                    "unknown key \"\(name)\"; tokens/ data takes access_token, refresh_token, expires_in or expires_at")
            }
        }
        guard members.contains(where: { $0.0 == "accessToken" }) else {
            throw KeychainError.param("the data needs \"access_token\"")
        }
        return try TokenPutRequest(decoding: JSONBody(members)).update(now: now)
    }

    /// The names one level below `tokens/<folder>`: services (`<service>/` where per-user tokens
    /// exist) for "", users for `<service>/`.
    func list(group: String, folder: String) throws -> [String] {
        var names = Set<String>()
        for item in try accessTokenItems(group: group) {
            guard case .string(let service)? = item[.service], case .string(let account)? = item[.account] else { continue }
            let suffix = ".accessToken"
            if account == TokenNaming.Kind.accessToken.rawValue {
                if folder.isEmpty, !service.contains("/") { names.insert(service) }
            } else if service.hasSuffix(suffix) {
                let base = String(service.dropLast(suffix.count))
                guard !base.isEmpty, !base.contains("/"), !account.contains("/") else { continue }
                if folder.isEmpty {
                    names.insert(base + "/")
                } else if folder == base + "/" {
                    names.insert(account)
                }
            }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    func hasAny(group: String) throws -> Bool {
        try !list(group: group, folder: "").isEmpty
    }

    /// Every generic password of the group, the caller's mount (a service's tokens are among them;
    /// an item search would answer the first page only).
    private func accessTokenItems(group: String) throws -> [Item] {
        try tokens.items.store.find(
            ItemFilter(itemClass: .genericPassword, accessGroups: [group], equal: [:]), limit: nil, after: nil,
            reading: .attributes
        ).items
    }
}
