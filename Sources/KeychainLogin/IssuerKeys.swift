import Foundation
import KeychainAPI
public import KeychainCore
import KeychainJOSE
import Logging
import Synchronization

/// Fetches a document (an issuer's key set or discovery document) by GET under the outbound
/// rules of the token endpoint client: https verified (against `caPEM` when given), plain http to
/// loopback only, bounded in bytes and time. Throws a description of what failed.
public protocol IssuerDocumentFetcher: Sendable {
    func fetch(_ url: TokenEndpointURL, caPEM: String?) throws -> (status: Int, body: [UInt8])
}

/// Why a role's keys could not be had: no fetch succeeded and no set fetched within
/// `staleSeconds` is left to serve. The description never holds key material.
struct IssuerKeysUnavailable: Error, CustomStringConvertible {
    let description: String
}

/// The keys of each login role's issuer: PEM keys parsed once per role version, key sets (from
/// `jwksURL` or OpenID discovery) fetched and cached for `freshSeconds`. A `kid` the cached set
/// lacks fetches again, at most once per `refetchSeconds` per issuer whatever caused the previous
/// fetch; when the issuer cannot be reached, the last good set serves for `staleSeconds`, with a
/// warning and `staleServes` counted.
final class IssuerKeys: Sendable {
    static let freshSeconds: Double = 300
    static let refetchSeconds: Double = 10

    private struct KeySet {
        var keys: [VerificationKey]
        var fetchedAt: Double
    }

    private struct Source: Hashable {
        var url: String
        var discovery: Bool
        var caPEM: String?
    }

    private struct State {
        var sets: [Source: KeySet] = [:]
        var lastAttempt: [Source: Double] = [:]
        var pemKeys: [String: (version: Date, keys: [VerificationKey])] = [:]
    }

    private let fetcher: any IssuerDocumentFetcher
    private let staleSeconds: Double
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let state = Mutex(State())
    /// One lock per source, so that a burst of logins after expiry makes one fetch, not one each,
    /// and an issuer that hangs holds up only its own roles' logins.
    private let fetchLocks = Mutex([Source: FetchLock]())

    private final class FetchLock: Sendable {
        let mutex = Mutex(())
    }
    private let stale = Atomic<UInt64>(0)

    init(
        fetcher: any IssuerDocumentFetcher, staleSeconds: Double, logger: Logger,
        now: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.fetcher = fetcher
        self.staleSeconds = staleSeconds
        self.logger = logger
        self.now = now
    }

    /// Logins served from a key set older than `freshSeconds` because its issuer could not be reached.
    var staleServes: UInt64 { stale.load(ordering: .relaxed) }

    /// The keys to verify `role`'s tokens with; `refetch`: the cached set lacked the token's
    /// `kid`, so fetch again if the issuer was not asked within `refetchSeconds`. Nil from a
    /// refetch that was not due.
    func keys(for role: LoginRole, refetch: Bool = false) throws -> [VerificationKey]? {
        let source: Source
        switch role.keys {
        case .publicKeys(let pems): return try pemKeys(pems, of: role)
        case .jwksURL(let url): source = Source(url: url, discovery: false, caPEM: role.caPEM)
        case .discovery: source = Source(url: role.issuer, discovery: true, caPEM: role.caPEM)
        }
        let time = now()
        let cached = state.withLock { $0.sets[source] }
        if !refetch, let cached, time - cached.fetchedAt < Self.freshSeconds { return cached.keys }
        let lock = fetchLocks.withLock { locks in
            if let lock = locks[source] { return lock }
            let lock = FetchLock()
            locks[source] = lock
            return lock
        }
        return try lock.mutex.withLock { _ -> [VerificationKey]? in
            let time = now()
            let (cached, lastAttempt) = state.withLock { ($0.sets[source], $0.lastAttempt[source]) }
            if let lastAttempt, time - lastAttempt < Self.refetchSeconds {
                // Asked moments ago (by this login's peers, or a rotation check): answer what is there.
                if refetch { return nil }
                if let cached, time - cached.fetchedAt < Self.freshSeconds + staleSeconds { return cached.keys }
                throw IssuerKeysUnavailable(description: "the issuer's keys could not be fetched moments ago")
            }
            state.withLock { $0.lastAttempt[source] = time }
            do {
                let keys = try fetch(source, role: role)
                state.withLock { $0.sets[source] = KeySet(keys: keys, fetchedAt: time) }
                return keys
            } catch {
                guard let cached, time - cached.fetchedAt < Self.freshSeconds + staleSeconds else {
                    throw IssuerKeysUnavailable(description: "the issuer's keys cannot be fetched: \(error)")
                }
                stale.add(1, ordering: .relaxed)
                logger.warning(
                    "serving an issuer's last good key set: it cannot be fetched",
                    metadata: ["role": "\(role.name)", "ageSeconds": "\(Int(time - cached.fetchedAt))", "reason": "\(error)"])
                return cached.keys
            }
        }
    }

    /// Checks a role's PEM keys (at PUT); errSecParam naming the one that does not parse.
    static func checkPEMKeys(_ pems: [String]) throws {
        for (index, pem) in pems.enumerated() {
            do {
                _ = try VerificationKey.parsePEM(pem)
            } catch {
                throw KeychainError.param("\"publicKeys\" entry \(index + 1) is not a usable public key: \(error)")
            }
        }
    }

    private func pemKeys(_ pems: [String], of role: LoginRole) throws -> [VerificationKey] {
        if let cached = state.withLock({ $0.pemKeys[role.name] }), cached.version == role.updatedAt { return cached.keys }
        let keys = try pems.map { pem in
            do { return try VerificationKey.parsePEM(pem) } catch { throw IssuerKeysUnavailable(description: "\(error)") }
        }
        state.withLock { $0.pemKeys[role.name] = (role.updatedAt, keys) }
        return keys
    }

    /// The key set at `source`: its JWKS URL, or the one the issuer's discovery document names.
    private func fetch(_ source: Source, role: LoginRole) throws -> [VerificationKey] {
        var jwksURL = try TokenEndpointURL(source.url, key: "jwksURL")
        if source.discovery {
            let issuer = role.issuer.hasSuffix("/") ? String(role.issuer.dropLast()) : role.issuer
            let document = try json(try get(TokenEndpointURL(issuer + "/.well-known/openid-configuration", key: "issuer"), source))
            guard let named = document["issuer"]?.stringValue, named.utf8.elementsEqual(role.issuer.utf8) else {
                throw IssuerKeysUnavailable(description: "the discovery document names another issuer")
            }
            guard let uri = document["jwks_uri"]?.stringValue else {
                throw IssuerKeysUnavailable(description: "the discovery document has no jwks_uri")
            }
            jwksURL = try TokenEndpointURL(uri, key: "jwks_uri")
        }
        do {
            return try JWKSet.parse(try get(jwksURL, source))
        } catch let error as KeyImportError {
            throw IssuerKeysUnavailable(description: "the key set is not usable: \(error)")
        }
    }

    private func get(_ url: TokenEndpointURL, _ source: Source) throws -> [UInt8] {
        let answer = try fetcher.fetch(url, caPEM: source.caPEM)
        guard answer.status == 200 else { throw IssuerKeysUnavailable(description: "\(url) answered \(answer.status)") }
        return answer.body
    }

    private func json(_ bytes: [UInt8]) throws -> JSONValue {
        guard let value = try? JSONValue.parse(bytes), case .object = value else {
            throw IssuerKeysUnavailable(description: "the discovery document is not a JSON object")
        }
        return value
    }
}
