public import Foundation
public import KeychainCore
import Testing

/// What every `ProviderStore` must do, checked with `#expect`: call `run()` from one test per
/// backend. `make` returns a new, empty store, what of its database a check may look at or alter
/// (nil for a store with no database: the in-memory one), and whatever keeps it alive.
public struct ProviderStoreConformance: Sendable {
    /// The database under a store, as a check sees it.
    public struct Database: Sendable {
        /// Every byte the providers' rows hold, as stored.
        public let rawBytes: @Sendable () throws -> [UInt8]
        /// Copies the stored (sealed) client secret of provider `from` into provider `to`'s row.
        public let copyClientSecret: @Sendable (_ from: String, _ to: String) throws -> Void

        public init(
            rawBytes: @escaping @Sendable () throws -> [UInt8],
            copyClientSecret: @escaping @Sendable (_ from: String, _ to: String) throws -> Void
        ) {
            self.rawBytes = rawBytes
            self.copyClientSecret = copyClientSecret
        }
    }

    public typealias Factory = @Sendable () throws -> (store: any ProviderStore, database: Database?, keepAlive: AnyObject?)

    private let make: Factory

    public init(_ make: @escaping Factory) { self.make = make }

    public func run() throws {
        try saveReadListReplaceAndDelete()
        try theClientSecretIsSealedAndBoundToItsProvider()
    }

    /// A provider with every member set, taking `secret`.
    public static func provider(_ name: String, secret: String?) throws -> OAuthProvider {
        OAuthProvider(
            name: name, authorizationEndpoint: try TokenEndpointURL("https://accounts.example/authorize", key: "authorizationEndpoint"),
            tokenEndpoint: try TokenEndpointURL("https://accounts.example/token"), clientId: "client-\(name)",
            clientSecret: secret.map { SecretBytes(utf8: $0) }, clientAuth: secret == nil ? .none : .post,
            scopes: ["openid", "calendar.read"], allowedScopes: ["openid", "calendar.read", "calendar.write"],
            authorizationParams: ["access_type": "offline", "prompt": "consent"],
            revocationEndpoint: try TokenEndpointURL("https://accounts.example/revoke", key: "revocationEndpoint"),
            issuer: "https://accounts.example", accessGroups: ["billing", "crm"])
    }

    /// Every member round-trips (a public client's absent secret too); a second save replaces,
    /// saying so, and the new secret is what is read; providers list in byte order of their
    /// names; a delete removes one and says whether there was one.
    public func saveReadListReplaceAndDelete() throws {
        let (store, _, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        #expect(try store.provider(named: "google") == nil && store.list().isEmpty)
        let google = try Self.provider("google", secret: "first-secret")
        #expect(try store.save(google) == false)
        #expect(try store.provider(named: "google") == google)
        var minimal = OAuthProvider(
            name: "a.public-client", authorizationEndpoint: try TokenEndpointURL("http://127.0.0.1:9/a", key: "authorizationEndpoint"),
            tokenEndpoint: try TokenEndpointURL("http://127.0.0.1:9/t"), clientId: "pkce-only", clientSecret: nil,
            clientAuth: .none, accessGroups: ["g"])
        #expect(try store.save(minimal) == false)
        #expect(try store.provider(named: "a.public-client") == minimal)
        #expect(try store.list().map(\.name) == ["a.public-client", "google"])

        var rotated = google
        rotated.clientSecret = SecretBytes(utf8: "second-secret")
        rotated.scopes = ["openid"]
        rotated.revocationEndpoint = nil
        #expect(try store.save(rotated) == true)
        #expect(try store.provider(named: "google") == rotated)
        #expect(try store.provider(named: "google")?.clientSecret?.utf8String() == "second-secret")
        minimal.clientAuth = .basic
        minimal.clientSecret = SecretBytes(utf8: "now-confidential")
        #expect(try store.save(minimal) == true)
        #expect(try store.provider(named: "a.public-client")?.clientSecret?.utf8String() == "now-confidential")

        #expect(try store.delete(named: "google") == true)
        #expect(try store.delete(named: "google") == false)
        #expect(try store.provider(named: "google") == nil)
        #expect(try store.list().map(\.name) == ["a.public-client"])
    }

    /// The database never holds a client secret in the clear, and a sealed secret moved to
    /// another provider's row does not open there (errSecDecode): it is bound to its provider.
    public func theClientSecretIsSealedAndBoundToItsProvider() throws {
        let (store, database, keepAlive) = try make()
        defer { withExtendedLifetime(keepAlive) {} }
        guard let database else { return }
        try store.save(Self.provider("one", secret: "secret-of-one-0123456789"))
        try store.save(Self.provider("two", secret: "secret-of-two-0123456789"))
        let raw = try database.rawBytes()
        #expect(!raw.isEmpty)
        for secret in ["secret-of-one-0123456789", "secret-of-two-0123456789"] {
            #expect(raw.firstRange(of: Array(secret.utf8)) == nil, "a client secret is stored in the clear")
        }
        try database.copyClientSecret("one", "two")
        #expect(try store.provider(named: "one")?.clientSecret?.utf8String() == "secret-of-one-0123456789")
        let moved = #expect(throws: KeychainError.self) { try store.provider(named: "two") }
        #expect(moved?.code == .decode)
    }
}
