public import Foundation
public import KeychainCore

/// The answers of the token self-service and login routes (`/v1/auth/*`) and of the admin token
/// list. Each answers natively and, where Vault's clients read the same call, with Vault's block
/// beside (`auth` for a login or renewal, `data` for `lookup-self`): one body for both surfaces.
public enum AuthAnswer: JSONAnswer {
    /// `GET /v1/auth/token/self`; with `token`, `lookup-self` (Vault's `data` names the token).
    case lookup(TokenHolder, now: Date, vaultToken: String?)
    /// `POST /v1/auth/token/renew-self`: as `self`, plus Vault's `auth`.
    case renewed(TokenHolder, token: String, now: Date)
    /// A login: the new token, as `self` describes it, plus Vault's `auth`.
    case loggedIn(TokenHolder, token: String, now: Date)
    /// `GET /v1/admin/tokens`: live tokens, never a token itself.
    case tokens([TokenRecord])

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 512) { answer in
            answer.member("status", 0)
            switch self {
            case .lookup(let holder, let now, let vaultToken):
                answer.describe(holder, now: now)
                if let vaultToken {
                    answer.vaultEnvelope()
                    answer.key("data")
                    answer.object { $0.vaultData(holder, token: vaultToken, now: now) }
                    answer.key("auth")
                    answer.null()
                }
            case .renewed(let holder, let token, let now):
                answer.describe(holder, now: now)
                answer.vaultEnvelope()
                answer.key("data")
                answer.null()
                answer.vaultAuth(holder, token: token, now: now)
            case .loggedIn(let holder, let token, let now):
                answer.member("token", token)
                answer.describe(holder, now: now)
                answer.vaultEnvelope()
                answer.key("data")
                answer.null()
                answer.vaultAuth(holder, token: token, now: now)
            case .tokens(let tokens):
                answer.key("tokens")
                answer.array { list in
                    for token in tokens {
                        list.object { entry in
                            entry.member("accessor", token.accessor)
                            entry.member("name", token.holderName)
                            entry.member("subject", token.subject)
                            entry.member("source", token.sourceName)
                            entry.member("issuedAt", token.issuedAt)
                            entry.member("expiresAt", token.expiresAt)
                            entry.member("maxExpiresAt", token.maxExpiresAt)
                            entry.member("renewable", token.renewable)
                        }
                    }
                }
            }
        }
    }
}

extension JSONWriter {
    /// A token as `self` describes it (never the token).
    fileprivate mutating func describe(_ holder: TokenHolder, now: Date) {
        let token = holder.token
        member("name", holder.client.name)
        member("subject", token.subject)
        key("accessGroups")
        array { groups in
            for group in holder.client.accessGroups { groups.string(group) }
        }
        member("role", holder.client.role.rawValue)
        member("accessor", token.accessor)
        member("source", token.sourceName)
        member("issuedAt", token.issuedAt)
        member("expiresAt", token.expiresAt)
        member("maxExpiresAt", token.maxExpiresAt)
        key("ttl")
        if let left = token.secondsLeft(at: now) { integer(left) } else { null() }
        member("renewable", token.renewable)
    }

    /// Vault's envelope members but `data` and `auth` (`VaultEnvelope`): `renewable` is the native
    /// one, the token's, which Vault's clients do not read at the top of these answers.
    fileprivate mutating func vaultEnvelope() {
        member("request_id", VaultEnvelope.randomRequestID())
        member("lease_id", "")
        member("lease_duration", 0)
        key("wrap_info")
        null()
        key("warnings")
        null()
    }

    /// Vault's `auth` block (`auth/jwt/login`, `auth/token/renew-self`).
    fileprivate mutating func vaultAuth(_ holder: TokenHolder, token: String, now: Date) {
        key("auth")
        object { auth in
            auth.member("client_token", token)
            auth.member("accessor", holder.token.accessor)
            auth.member("lease_duration", holder.token.secondsLeft(at: now) ?? 0)
            auth.member("renewable", holder.token.renewable)
            auth.policies(holder.client.accessGroups, key: "policies")
            auth.policies(holder.client.accessGroups, key: "token_policies")
            auth.member("token_type", "service")
            auth.member("orphan", true)
            auth.member("entity_id", "")
            auth.member("num_uses", 0)
            auth.key("mfa_requirement")
            auth.null()
            auth.vaultMetadata(holder.token, key: "metadata")
        }
    }

    /// Vault's `data` block of `auth/token/lookup-self`.
    fileprivate mutating func vaultData(_ holder: TokenHolder, token: String, now: Date) {
        let record = holder.token
        member("accessor", record.accessor)
        member("creation_time", Int64(record.issuedAt.timeIntervalSince1970.rounded(.down)))
        member("creation_ttl", record.ttlSeconds ?? 0)
        member("display_name", record.holderName)
        member("entity_id", "")
        member("expire_time", record.expiresAt)
        member("explicit_max_ttl", record.maxExpiresAt.map { Int64($0.timeIntervalSince(record.issuedAt).rounded()) } ?? 0)
        member("id", token)
        member("issue_time", record.issuedAt)
        vaultMetadata(record, key: "meta")
        member("num_uses", 0)
        member("orphan", true)
        member("path", record.sourceName == "static" ? "auth/token/create" : "auth/jwt/login")
        policies(holder.client.accessGroups, key: "policies")
        member("renewable", record.renewable)
        member("ttl", record.secondsLeft(at: now) ?? 0)
        member("type", "service")
    }

    fileprivate mutating func policies(_ groups: [String], key name: String) {
        key(name)
        array { list in
            for group in groups { list.string(group) }
        }
    }

    /// `{role, subject}` of a login token; `null` for a client's token, which has neither (as
    /// OpenBao answers for a token made without metadata).
    fileprivate mutating func vaultMetadata(_ record: TokenRecord, key name: StaticString) {
        key(name)
        guard case .login(let role) = record.source else { return null() }
        object { metadata in
            metadata.member("role", role)
            metadata.member("subject", record.subject ?? "")
        }
    }
}
