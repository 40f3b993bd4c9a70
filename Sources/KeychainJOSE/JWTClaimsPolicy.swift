public import Foundation
public import KeychainAPI
public import KeychainCore

/// The claim checks of a JWT login role (RFC 7519 §4.1 and the role's bindings), on claims whose
/// signature `JWSVerifier` has accepted. Strings are compared by their UTF-8 bytes, never by
/// Unicode equivalence.
public struct JWTClaimsPolicy: Sendable {
    /// A claim the role binds (`LoginRole.BoundClaim`: a claim's name or a JSON pointer, and the
    /// globs one of which its value must match). A refusal names the claim as written there.
    public typealias BoundClaim = LoginRole.BoundClaim

    /// `iss` must equal this.
    public var issuer: String
    /// `aud` (a string, or an array of strings) must hold one of these.
    public var audiences: [String]
    /// When set, `sub` must match this glob.
    public var boundSubject: String?
    public var boundClaims: [BoundClaim]
    /// The clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
    public var leeway: TimeInterval

    public init(
        issuer: String, audiences: [String], boundSubject: String? = nil, boundClaims: [BoundClaim] = [],
        leeway: TimeInterval = 60
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.boundSubject = boundSubject
        self.boundClaims = boundClaims
        self.leeway = leeway
    }

    /// Checks `claims` at `now`, in this order: issuer, expiry, not-before and issued-at,
    /// audience, subject, then the bound claims in the role's order.
    public func check(_ claims: JSONValue, now: Date) throws(JWTRefusal) {
        let now = now.timeIntervalSince1970
        guard case .string(let iss)? = member("iss", of: claims), Self.same(iss, issuer) else { throw .issuer }
        guard let exp = Self.seconds(member("exp", of: claims)), now < exp + leeway else { throw .expired }
        for name in ["nbf", "iat"] {
            guard let value = member(name, of: claims) else { continue }
            guard let time = Self.seconds(value), time <= now + leeway else { throw .notYetValid }
        }
        guard audienceMatches(member("aud", of: claims)) else { throw .audience }
        if let boundSubject {
            guard case .string(let sub)? = member("sub", of: claims), Glob(boundSubject).matches(sub) else {
                throw .subject
            }
        }
        for bound in boundClaims {
            let value =
                bound.claim.utf8.first == UInt8(ascii: "/")
                ? JSONPointer(bound.claim).resolve(in: claims) : member(bound.claim, of: claims)
            guard let value, Self.value(value, matchesAnyOf: bound.globs.map(Glob.init)) else {
                throw .claim(bound.claim)
            }
        }
    }

    private func audienceMatches(_ aud: JSONValue?) -> Bool {
        switch aud {
        case .string(let audience)?:
            return audiences.contains { Self.same($0, audience) }
        case .array(let elements)?:
            return elements.contains { element in
                guard case .string(let audience) = element else { return false }
                return audiences.contains { Self.same($0, audience) }
            }
        default:
            return false
        }
    }

    /// A string is matched as it is; a number or a boolean by its JSON text (`42`, `true`); an
    /// array when one of its strings matches. Anything else (null, an object) never matches.
    private static func value(_ value: JSONValue, matchesAnyOf globs: [Glob]) -> Bool {
        switch value {
        case .string(let string):
            return globs.contains { $0.matches(string) }
        case .integer, .number, .bool:
            let text = String(decoding: value.serialized(), as: UTF8.self)
            return globs.contains { $0.matches(text) }
        case .array(let elements):
            return elements.contains { element in
                guard case .string(let string) = element else { return false }
                return globs.contains { $0.matches(string) }
            }
        case .null, .object:
            return false
        }
    }

    /// A NumericDate (RFC 7519 §2): seconds since the epoch, whole or fractional (always finite:
    /// the JSON parser refuses numbers out of a double's range).
    private static func seconds(_ value: JSONValue?) -> TimeInterval? {
        switch value {
        case .integer(let seconds)?: TimeInterval(seconds)
        case .number(let seconds)?: seconds
        default: nil
        }
    }

    /// The top-level claim `name`, matched by bytes.
    private func member(_ name: String, of claims: JSONValue) -> JSONValue? {
        guard case .object(let members) = claims else { return nil }
        return members.first { $0.0.utf8.elementsEqual(name.utf8) }?.1
    }

    private static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
}
