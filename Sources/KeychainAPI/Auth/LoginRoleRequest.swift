public import KeychainCore

/// The body of `PUT /v1/admin/auth/jwt/roles/{role}` as a `LoginRole`, with every rule a role
/// must keep that needs no key material (the PEM keys themselves are checked by the login
/// service). Unknown keys and wrong types are errSecParam naming the key.
public enum LoginRoleRequest {
    /// At most this many PEM keys, and this many bound claims (each with this many globs).
    static let maximumKeys = 16
    static let maximumClaims = 32
    static let maximumGlobs = 32
    /// A text setting (issuer, audience, glob, claim) is at most this many bytes; a PEM, 16 KiB.
    static let maximumTextBytes = 1024
    static let maximumPEMBytes = 16 * 1024

    public static func role(named name: String, decoding body: JSONBody) throws -> LoginRole {
        guard LoginRole.isValidName(name) else {
            throw KeychainError.param("a role's name is 1-128 of a-z, 0-9, \".\", \"_\" and \"-\" (not . or ..)")
        }
        var issuer: String?
        var jwksURL: String?
        var publicKeys: [String]?
        var caPEM: String?
        var audiences: [String]?
        var boundSubject: String?
        var boundClaims: [LoginRole.BoundClaim] = []
        var algorithms = LoginRole.defaultAlgorithms
        var accessGroups: [String]?
        var tokenTTL: Int64 = 600
        var tokenMaxTTL: Int64?
        var leeway: Int64 = 60
        var maxLiveTokens = 10_000
        var allowIssuerAudience = false
        for (key, value) in body.members {
            switch key {
            case "issuer": issuer = try text(value, key: key)
            case "jwksURL": jwksURL = try TokenEndpointURL(try text(value, key: key), key: key).text
            case "publicKeys":
                let keys = try texts(value, key: key, limit: maximumKeys, bytes: maximumPEMBytes)
                guard !keys.isEmpty else { throw KeychainError.param("\"publicKeys\" must hold at least one PEM key") }
                publicKeys = keys
            case "caPEM":
                let pem = try text(value, key: key, bytes: maximumPEMBytes)
                guard pem.contains("-----BEGIN CERTIFICATE-----") else {
                    throw KeychainError.param("\"caPEM\" must be a PEM certificate (-----BEGIN CERTIFICATE-----)")
                }
                caPEM = pem
            case "audiences":
                let list = try texts(value, key: key, limit: maximumClaims, bytes: maximumTextBytes)
                guard !list.isEmpty else { throw KeychainError.param("\"audiences\" must name at least one audience") }
                audiences = list
            case "boundSubject": boundSubject = try text(value, key: key)
            case "boundClaims": boundClaims = try claims(value)
            case "algorithms":
                let list = try texts(value, key: key, limit: LoginRole.supportedAlgorithms.count, bytes: 16)
                guard !list.isEmpty, list.allSatisfy(LoginRole.supportedAlgorithms.contains) else {
                    throw KeychainError.param(
                        "\"algorithms\" must name some of \(LoginRole.supportedAlgorithms.joined(separator: ", ")) (never none or HMAC)")
                }
                algorithms = list
            case "accessGroups": accessGroups = try AccessGroupList.parse(value, key: key)
            case "tokenTTL": tokenTTL = try DurationSeconds.parse(value, key: key, allowText: false)
            case "tokenMaxTTL": tokenMaxTTL = try DurationSeconds.parse(value, key: key, allowText: false)
            case "leeway": leeway = try integer(value, key: key, in: 0...3600)
            case "maxLiveTokens": maxLiveTokens = Int(try integer(value, key: key, in: 1...1_000_000))
            case "allowIssuerAudience":
                guard case .bool(let flag) = value else { throw KeychainError.param("\"allowIssuerAudience\" must be true or false") }
                allowIssuerAudience = flag
            default:
                throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
        guard let issuer else { throw KeychainError.param("\"issuer\" is required") }
        guard let audiences else { throw KeychainError.param("\"audiences\" is required") }
        guard let accessGroups else { throw KeychainError.param("\"accessGroups\" is required") }
        let keys: LoginRole.Keys
        switch (jwksURL, publicKeys) {
        case (let url?, nil): keys = .jwksURL(url)
        case (nil, let pems?): keys = .publicKeys(pems)
        case (nil, nil):
            _ = try TokenEndpointURL(issuer, key: "issuer")
            keys = .discovery
        default: throw KeychainError.param("give \"jwksURL\" or \"publicKeys\", not both (neither: OpenID discovery)")
        }
        // Without a cap, an hour, or the TTL when that is longer (as a client's `maxTtl`).
        let cap = tokenMaxTTL ?? max(3600, tokenTTL)
        guard cap >= tokenTTL else { throw KeychainError.param("\"tokenMaxTTL\" must be at least \"tokenTTL\"") }
        let binds = (boundSubject.map(bindsSomething) ?? false) || boundClaims.contains { $0.globs.allSatisfy(bindsSomething) }
        guard binds else {
            throw KeychainError.param(
                "a role must bind \"boundSubject\" or a claim in \"boundClaims\" with a glob other than \"*\": on a shared issuer any tenant can mint a token with any audience")
        }
        if !allowIssuerAudience, audiences.contains(where: { $0.utf8.elementsEqual(issuer.utf8) }) {
            throw KeychainError.param(
                "\"audiences\" holds the issuer itself (Kubernetes' default audience, which every workload's token carries); set \"allowIssuerAudience\": true to accept it")
        }
        return LoginRole(
            name: name, issuer: issuer, keys: keys, caPEM: caPEM, audiences: audiences, boundSubject: boundSubject,
            boundClaims: boundClaims, algorithms: algorithms, accessGroups: accessGroups, tokenTTL: tokenTTL,
            tokenMaxTTL: cap, leeway: leeway, maxLiveTokens: maxLiveTokens, allowIssuerAudience: allowIssuerAudience)
    }

    /// Whether a glob admits less than everything (holds a character other than `*`).
    static func bindsSomething(_ glob: String) -> Bool { glob.utf8.contains { $0 != UInt8(ascii: "*") } }

    private static func text(_ value: JSONValue, key: String, bytes: Int = maximumTextBytes) throws -> String {
        guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= bytes else {
            throw KeychainError.param("\"\(key)\" must be a non-empty string of at most \(bytes) bytes")
        }
        return text
    }

    private static func texts(_ value: JSONValue, key: String, limit: Int, bytes: Int) throws -> [String] {
        guard case .array(let values) = value, values.count <= limit else {
            throw KeychainError.param("\"\(key)\" must be an array of at most \(limit) strings")
        }
        return try values.map { try text($0, key: key, bytes: bytes) }
    }

    private static func integer(_ value: JSONValue, key: String, in range: ClosedRange<Int64>) throws -> Int64 {
        guard case .integer(let number) = value, range.contains(number) else {
            throw KeychainError.param("\"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `{"claim" or "/json/pointer": glob or [globs]}`.
    private static func claims(_ value: JSONValue) throws -> [LoginRole.BoundClaim] {
        guard case .object(let members) = value, members.count <= maximumClaims else {
            throw KeychainError.param("\"boundClaims\" must be an object of at most \(maximumClaims) claims")
        }
        return try members.map { claim, globs in
            guard !claim.isEmpty, claim.utf8.count <= maximumTextBytes else {
                throw KeychainError.param("a claim in \"boundClaims\" must be named (at most \(maximumTextBytes) bytes)")
            }
            let list: [String]
            switch globs {
            case .string: list = [try text(globs, key: "boundClaims")]
            default: list = try texts(globs, key: "boundClaims", limit: maximumGlobs, bytes: maximumTextBytes)
            }
            guard !list.isEmpty else { throw KeychainError.param("claim \(claim) in \"boundClaims\" needs at least one glob") }
            return LoginRole.BoundClaim(claim: claim, globs: list)
        }
    }
}

/// The body of a login (`POST /v1/auth/jwt/login`, `/v1/auth/kubernetes/login`): `{"role","jwt"}`;
/// the role name is lowercased. Anything else is errSecParam.
public struct LoginRequest: Sendable {
    public var role: String
    public var jwt: String

    public init(decoding body: JSONBody) throws {
        var role: String?
        var jwt: String?
        for (key, value) in body.members {
            switch key {
            case "role":
                guard let text = value.stringValue else { throw KeychainError.param("\"role\" must be a string") }
                role = text.lowercased()
            case "jwt":
                guard let text = value.stringValue else { throw KeychainError.param("\"jwt\" must be a string") }
                jwt = text
            default:
                throw KeychainError.param("unknown key \"\(key)\"")
            }
        }
        guard let role, let jwt else { throw KeychainError.param("a login needs \"role\" and \"jwt\"") }
        self.role = role
        self.jwt = jwt
    }
}

/// The answers of the role routes: `{"status":0,"role":{…}}` and `{"status":0,"roles":[…]}`.
public enum LoginRoleAnswer: JSONAnswer {
    case role(LoginRole)
    case roles([LoginRole])

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 1024) { answer in
            answer.member("status", 0)
            switch self {
            case .role(let role):
                answer.key("role")
                answer.object { $0.loginRole(role) }
            case .roles(let roles):
                answer.key("roles")
                answer.array { list in
                    for role in roles { list.object { $0.loginRole(role) } }
                }
            }
        }
    }
}

extension JSONWriter {
    fileprivate mutating func loginRole(_ role: LoginRole) {
        member("name", role.name)
        member("issuer", role.issuer)
        switch role.keys {
        case .jwksURL(let url): member("jwksURL", url)
        case .publicKeys(let pems): strings("publicKeys", pems)
        case .discovery: break
        }
        member("caPEM", role.caPEM)
        strings("audiences", role.audiences)
        member("boundSubject", role.boundSubject)
        key("boundClaims")
        object { claims in
            for claim in role.boundClaims {
                claims.key(claim.claim)
                claims.array { globs in
                    for glob in claim.globs { globs.string(glob) }
                }
            }
        }
        strings("algorithms", role.algorithms)
        strings("accessGroups", role.accessGroups)
        member("tokenTTL", role.tokenTTL)
        member("tokenMaxTTL", role.tokenMaxTTL)
        member("leeway", role.leeway)
        member("maxLiveTokens", role.maxLiveTokens)
        member("allowIssuerAudience", role.allowIssuerAudience)
        member("updatedAt", role.updatedAt)
    }

    fileprivate mutating func strings(_ name: StaticString, _ values: [String]) {
        key(name)
        array { list in
            for value in values { list.string(value) }
        }
    }
}
