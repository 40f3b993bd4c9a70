public import Foundation
public import KeychainCore

/// The answers that say a call succeeded (`"status":0`, errSecSuccess) and what it did or
/// found: one case per route's shape, all written by the one writer below.
public enum StatusAnswer: JSONAnswer {
    /// `{"status":0}`: done, nothing more to say (`revoke-self`).
    case done
    /// `{"status":0,"<counted>":N}`: items updated or deleted, tokens or a client deleted, data
    /// keys rewrapped.
    case count(Counted, Int)
    /// `PUT /tokens/{service}`: `{"status":0,"replaced":N,"expiresAt":…|null}`.
    case tokensSaved(replaced: Int, expiresAt: Date?)
    /// `POST /admin/lock` and `/admin/unlock`: `{"status":0,"locked":…}`.
    case locked(Bool)
    /// `POST /admin/rotate`: `{"status":0,"term":…,"reencrypting":…}`.
    case rotated(term: UInt32, reencrypting: Bool)
    /// `GET /admin/vault`: `{"status":0,"locked":…,"currentTerm":…,"currentTermEncryptions":…,
    /// "terms":…,"reencryption":{…}|null,"lastBackup":"…"|null,"backupsCompleted":…}`.
    case vault(VaultStatus)
    /// `POST /admin/clients`: `{"status":0,"name",…,"createdAt","token","accessor","expiresAt",
    /// "maxExpiresAt"}`, the token shown once.
    case clientCreated(Client, token: String, record: TokenRecord)
    /// `GET /admin/clients`: `{"status":0,"clients":[{"name",…,"createdAt"},…]}`, never a token.
    case clients([Client])
    /// `POST /admin/clients/{name}/token`: `{"status":0,"name":…,"token":…,"accessor":…,"expiresAt":…,"maxExpiresAt":…}`.
    case clientToken(name: String, token: String, record: TokenRecord)

    public enum Counted: String, Sendable {
        case updated, deleted, rewrapped
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 64) { answer in
            answer.member("status", 0)
            switch self {
            case .done:
                break
            case .count(let counted, let count):
                answer.key(counted.rawValue)
                answer.integer(Int64(count))
            case .tokensSaved(let replaced, let expiresAt):
                answer.member("replaced", replaced)
                answer.member("expiresAt", expiresAt)
            case .locked(let locked):
                answer.member("locked", locked)
            case .rotated(let term, let reencrypting):
                answer.member("term", Int64(term))
                answer.member("reencrypting", reencrypting)
            case .vault(let status):
                answer.vault(status)
            case .clientCreated(let client, let token, let record):
                answer.client(client)
                answer.member("token", token)
                answer.tokenLifetime(record)
            case .clients(let clients):
                answer.key("clients")
                answer.array { list in
                    for client in clients { list.object { $0.client(client) } }
                }
            case .clientToken(let name, let token, let record):
                answer.member("name", name)
                answer.member("token", token)
                answer.tokenLifetime(record)
            }
        }
    }

    /// The count an answer gives (the client's side of `.count`).
    public static func count(_ counted: Counted, in json: JSONValue) throws -> Int {
        guard case .integer(let count)? = json[counted.rawValue], let exact = Int(exactly: count) else {
            throw KeychainError.decode("the answer has no \"\(counted.rawValue)\" count")
        }
        return exact
    }
}

extension JSONWriter {
    /// A client's members, as the admin answers give them (never a token).
    fileprivate mutating func client(_ client: Client) {
        member("name", client.name)
        key("accessGroups")
        array { groups in
            for group in client.accessGroups { groups.string(group) }
        }
        member("role", client.role.rawValue)
        member("createdAt", client.createdAt)
        key("ttl")
        if let lifetime = client.tokenLifetime { integer(lifetime.ttlSeconds) } else { null() }
        key("maxTtl")
        if let lifetime = client.tokenLifetime { integer(lifetime.maxTTLSeconds) } else { null() }
    }

    /// A new token's accessor and expiry, beside the token shown once.
    fileprivate mutating func tokenLifetime(_ record: TokenRecord) {
        member("accessor", record.accessor)
        member("expiresAt", record.expiresAt)
        member("maxExpiresAt", record.maxExpiresAt)
    }

    fileprivate mutating func vault(_ status: VaultStatus) {
        member("locked", status.locked)
        member("currentTerm", Int64(status.currentTerm))
        member("currentTermEncryptions", Int64(clamping: status.currentTermEncryptions))
        member("terms", status.termCount)
        key("reencryption")
        if let progress = status.reencryption {
            object { job in
                job.member("state", progress.state.rawValue)
                job.member("targetTerm", Int64(progress.targetTerm))
                job.member("total", progress.total)
                job.member("done", progress.done)
            }
        } else {
            null()
        }
        member("lastBackup", status.lastBackup)
        member("backupsCompleted", status.backupsCompleted)
    }
}
