public import Foundation
public import KeychainCore

/// The body of `POST /v1/connect`: `{"provider","service","user"?,"accessGroup"?,"scopes"?,"returnTo"?}`.
/// Unknown keys and wrong types are errSecParam naming the key; the rules that need the provider,
/// the caller or the configuration are the connect flow's.
public struct ConnectStartRequest: Sendable {
    /// A text member is at most this many bytes; `returnTo` at most `maximumURLBytes`.
    static let maximumTextBytes = 1024
    static let maximumURLBytes = 2048
    /// At most this many scopes.
    static let maximumScopes = 64

    public var provider: String
    public var service: String
    public var user: String?
    public var accessGroup: String?
    /// Nil: the provider's default scopes.
    public var scopes: [String]?
    public var returnTo: String?

    public init(provider: String, service: String, user: String? = nil, accessGroup: String? = nil, scopes: [String]? = nil,
        returnTo: String? = nil)
    {
        self.provider = provider
        self.service = service
        self.user = user
        self.accessGroup = accessGroup
        self.scopes = scopes
        self.returnTo = returnTo
    }

    public init(decoding body: JSONBody) throws {
        var provider: String?
        var service: String?
        for (key, value) in body.members {
            switch key {
            case "provider": provider = try Self.text(value, key: key)
            case "service": service = try Self.text(value, key: key)
            case "user": user = try Self.text(value, key: key)
            case "accessGroup": accessGroup = try Self.text(value, key: key)
            case "scopes":
                guard case .array(let values) = value, values.count <= Self.maximumScopes else {
                    throw KeychainError.param("\"scopes\" must be an array of at most \(Self.maximumScopes) strings")
                }
                scopes = try values.map { try Self.text($0, key: key) }
            case "returnTo": returnTo = try Self.text(value, key: key, bytes: Self.maximumURLBytes)
            default: throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
        guard let provider else { throw KeychainError.param("\"provider\" is required") }
        guard let service else { throw KeychainError.param("\"service\" is required") }
        self.provider = provider
        self.service = service
    }

    private static func text(_ value: JSONValue, key: String, bytes: Int = maximumTextBytes) throws -> String {
        guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= bytes else {
            throw KeychainError.param("\"\(key)\" must be a non-empty string of at most \(bytes) bytes")
        }
        return text
    }
}

/// The answer of `POST /v1/connect`: `{"status":0,"connectId","authorizationURL","expiresAt"}`.
public struct ConnectStartAnswer: JSONAnswer {
    public var connectId: String
    public var authorizationURL: String
    public var expiresAt: Date

    public init(connectId: String, authorizationURL: String, expiresAt: Date) {
        self.connectId = connectId
        self.authorizationURL = authorizationURL
        self.expiresAt = expiresAt
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 256) { answer in
            answer.member("status", 0)
            answer.member("connectId", connectId)
            answer.member("authorizationURL", authorizationURL)
            answer.member("expiresAt", expiresAt)
        }
    }
}

/// The answer of `GET /v1/connect/{connectId}`: `{"status":0,"connectId","state","provider",
/// "service","user"|null,"accessGroup","scopes","createdAt","expiresAt","error"|null,
/// "refreshable"|null,"scope"|null}`. `state` is the outcome at the time of answering (an expired
/// pending session is `failed` with `expired`); `refreshable` and `scope` (the granted scope) are
/// set once connected. Never the OAuth `state`, the verifier or a token.
public struct ConnectSessionAnswer: JSONAnswer {
    public var session: ConnectSession
    public var outcome: ConnectOutcome

    public init(_ session: ConnectSession, at now: Date) {
        self.session = session
        outcome = session.outcome(at: now)
    }

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 512) { answer in
            answer.member("status", 0)
            answer.member("connectId", session.id)
            answer.member("state", outcome.name)
            answer.member("provider", session.provider)
            answer.member("service", session.key.service)
            answer.member("user", session.key.user)
            answer.member("accessGroup", session.key.group)
            answer.key("scopes")
            answer.array { list in
                for scope in session.scopes { list.string(scope) }
            }
            answer.member("createdAt", session.createdAt)
            answer.member("expiresAt", session.expiresAt)
            switch outcome {
            case .pending:
                answer.member("error", nil as String?)
                answer.key("refreshable")
                answer.null()
                answer.member("scope", nil as String?)
            case .connected(let refreshable, let scope):
                answer.member("error", nil as String?)
                answer.member("refreshable", refreshable)
                answer.member("scope", scope)
            case .failed(let error):
                answer.member("error", error)
                answer.key("refreshable")
                answer.null()
                answer.member("scope", nil as String?)
            }
        }
    }
}
