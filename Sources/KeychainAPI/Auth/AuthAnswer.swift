public import Foundation
public import KeychainCore

/// The answers of the token self-service and login routes (`/v1/auth/*`) and of the admin token
/// list. Each answers natively and, where Vault's clients read the same call, with Vault's block
/// beside (`auth` for a login or renewal, `data` for `lookup-self`): one body for both surfaces.
public enum AuthAnswer: JSONAnswer {
    /// `GET /v1/auth/token/self`; with `token`, `lookup-self` (Vault's `data` names the token).
    case lookup(TokenHolder, now: Date, vaultToken: String?, caller: Caller)
    /// `POST /v1/auth/token/renew-self`: as `self`, plus Vault's `auth`.
    case renewed(TokenHolder, token: String, now: Date, caller: Caller)
    /// A login: the new token, as `self` describes it, plus Vault's `auth`.
    case loggedIn(TokenHolder, token: String, now: Date, caller: Caller)
    /// `GET /v1/admin/tokens`: live tokens, never a token itself.
    case tokens([TokenRecord])

    /// Who reads the top-level `renewable`, the one key both surfaces answer: keychaind's clients
    /// read the token's, a tool written for Vault the envelope's (the lease's, `false` in
    /// OpenBao's answers to these calls, a token being no lease).
    public enum Caller: Sendable {
        case native
        case vaultTool
    }
    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 512) { answer in
            answer.member("status", 0)
            switch self {
            case .lookup(let holder, let now, let vaultToken, let caller):
                answer.describe(holder, now: now, for: caller)
                if let vaultToken {
                    answer.vaultEnvelope()
                    answer.key("data")
                    answer.object { $0.vaultData(holder, token: vaultToken, now: now) }
                    answer.key("auth")
                    answer.null()
                }
            case .renewed(let holder, let token, let now, let caller):
                answer.describe(holder, now: now, for: caller)
                answer.vaultEnvelope()
                answer.key("data")
                answer.null()
                answer.vaultAuth(holder, token: token)
            case .loggedIn(let holder, let token, let now, let caller):
                answer.member("token", token)
                answer.describe(holder, now: now, for: caller)
                answer.vaultEnvelope()
                answer.key("data")
                answer.null()
                answer.vaultAuth(holder, token: token)
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
    /// A token as `self` describes it (never the token); `renewable` as `caller` reads it.
    fileprivate mutating func describe(_ holder: TokenHolder, now: Date, for caller: AuthAnswer.Caller) {
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
        member("renewable", caller == .native && token.renewable)
    }

    /// Vault's envelope members but `data` and `auth` (`VaultEnvelope`); `renewable` is `describe`'s.
    fileprivate mutating func vaultEnvelope() {
        member("request_id", VaultEnvelope.randomRequestID())
        member("lease_id", "")
        member("lease_duration", 0)
        key("wrap_info")
        null()
        key("warnings")
        null()
    }

    /// Vault's `auth` block (`auth/jwt/login`, `auth/token/renew-self`): `lease_duration` is the
    /// lifetime the login or renewal granted, as OpenBao answers it (3600 for an hour), not the
    /// seconds left by the time of the answer.
    fileprivate mutating func vaultAuth(_ holder: TokenHolder, token: String) {
        key("auth")
        object { auth in
            auth.member("client_token", token)
            auth.member("accessor", holder.token.accessor)
            auth.member("lease_duration", holder.token.grantedSeconds ?? 0)
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

    /// Vault's `data` block of `auth/token/lookup-self`: `ttl` counts down to the nearest second
    /// (OpenBao's, from now rounded to the second: 3600 just after a renewal by an hour);
    /// `last_renewal` and `last_renewal_time` only once the token was renewed, as OpenBao.
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
        if let lastRenewal = record.lastRenewal {
            member("last_renewal", lastRenewal)
            member("last_renewal_time", Int64(lastRenewal.timeIntervalSince1970.rounded(.down)))
        }
        vaultMetadata(record, key: "meta")
        member("num_uses", 0)
        member("orphan", true)
        member("path", record.sourceName == "static" ? "auth/token/create" : "auth/jwt/login")
        policies(holder.client.accessGroups, key: "policies")
        member("renewable", record.renewable)
        member("ttl", record.expiresAt.map { max(0, Int64($0.timeIntervalSince(now).rounded())) } ?? 0)
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
