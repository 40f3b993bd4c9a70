// swift-tools-version:6.1
import PackageDescription

/// Layers, dependencies pointing inward:
///   KeychainCore  ←  KeychainStore, KeychainAPI  ←  KeychainHTTP  ←  MicroHTTPDServer  ←  KeychaindApp  ←  keychaind
///   KeychainCore, KeychainAPI  ←  KeychainJOSE (JWT verification for workload login, no I/O)
///   KeychainStore (the vault)  ←  KeychainSQLite, KeychainPostgreSQL (its backends)  ←  KeychaindApp
///   KeychainHTTP  ←  KeychainObservability (log backend, audit file)  ←  KeychaindApp
/// KeychaindApp is the wiring (the app `serve` runs); keychaind keeps the command line, process
/// hardening, signals and the data directory's lock.
/// KeychainConcurrency (pthread locks and per-thread state for the request path) stands beside
/// KeychainCore: KeychainStore and KeychainHTTP use it, the keychain rules do not.
/// C is reached only through the system-library modules, and only from KeychainStore (COpenSSL),
/// KeychainSQLite (CSQLite), KeychainPostgreSQL (CLibPQ), MicroHTTPDServer, KeychainRefresh (CCurl), keychaind (CProcessHardening) and
/// KeychainJOSE (COpenSSL for JWS signatures) and KeychainClient (COpenSSL for SecKey), with
/// `internal import` (docs/decisions.md).
/// The client library, KeychainClient, alone speaks HTTP(S) through AsyncHTTPClient (swift-nio);
/// nothing the server is built from depends on it (`swift build --product keychaind` builds no NIO).
/// Every target: existentials spelled `any`, and every import declared where it is used,
/// internal unless the module's API exposes it (`public import`/`package import`).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]
/// The crash points of the fault tests (`FaultInjection`, `KEYCHAIND_FAULT`), compiled into debug
/// builds only: `swift build --build-tests` and the tests' `keychaind` have them, the release
/// builds (`scripts/run`, the image, the benches) do not.
let faultInjection: [SwiftSetting] = [.define("KEYCHAIND_FAULT_INJECTION", .when(configuration: .debug))]

let package = Package(
    name: "keychaind",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "keychaind", targets: ["keychaind"]),
        .library(name: "KeychainClient", targets: ["KeychainClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // KeychainClient only: HTTP(S) with a private CA as trust root (docs/decisions.md, "Tokens and client").
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Tests only: property-based fuzzing of the JSON parser and request decoders (docs/reliability.md).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // MARK: C edge
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CProcessHardening"),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),

        // MARK: Swift layers
        .target(name: "KeychainCore", swiftSettings: swiftSettings),
        .target(name: "KeychainConcurrency", swiftSettings: swiftSettings),
        // The vault, whatever its storage: sealing, the keyring, re-encryption, the data
        // directory, and one `Vault` over a `VaultBackend`. No database's C module.
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainCore", "KeychainConcurrency", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings + faultInjection),
        // The storage backends, each over its own C module only.
        .target(
            name: "KeychainSQLite",
            dependencies: [
                "KeychainStore", "KeychainCore", "KeychainConcurrency", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings + faultInjection),
        .target(
            name: "KeychainPostgreSQL",
            dependencies: [
                "KeychainStore", "KeychainCore", "KeychainConcurrency", "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings + faultInjection),
        .executableTarget(
            name: "StorageBench",
            dependencies: [
                "KeychainStore", "KeychainSQLite", "KeychainCore", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(name: "KeychainAPI", dependencies: ["KeychainCore", "KeychainConcurrency"], swiftSettings: swiftSettings),
        // JWT verification for workload login: compact JWS, JWK sets and PEM keys over OpenSSL,
        // and the claim checks of a login role (docs/decisions.md, "JOSE over OpenSSL").
        .target(
            name: "KeychainJOSE", dependencies: ["KeychainCore", "KeychainAPI", "COpenSSL"],
            swiftSettings: swiftSettings),
        // Server-side token refresh: the token endpoint client (libcurl) and the refresher
        // (single flight, states, background thread); docs/decisions.md, "Outbound HTTP through libcurl".
        .target(
            name: "KeychainRefresh",
            dependencies: ["KeychainCore", "KeychainAPI", "KeychainConcurrency", "CCurl"],
            swiftSettings: swiftSettings),
        // Workload login: login roles, issuers' key sets, the login and role routes.
        .target(
            name: "KeychainLogin",
            dependencies: [
                "KeychainCore", "KeychainAPI", "KeychainJOSE", "KeychainHTTP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // The connect flow (OAuth 2.0 authorization code with PKCE): sessions, the browser's legs,
        // the code exchange (KeychainRefresh's libcurl client), waits that hold no worker, and its routes.
        .target(
            name: "KeychainConnect",
            dependencies: [
                "KeychainCore", "KeychainAPI", "KeychainHTTP", "KeychainRefresh", "KeychainStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "KeychainHTTP",
            dependencies: [
                "KeychainCore", "KeychainConcurrency", "KeychainAPI",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // The log backend and the audit file's writing: what KeychainHTTP's request log and auditor
        // write through (its `PreformattedLog` and `AuditSink`); only the wiring (KeychaindApp) and the executable use it.
        .target(
            name: "KeychainObservability",
            dependencies: [
                "KeychainHTTP", "KeychainCore", "KeychainConcurrency",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "MicroHTTPDServer",
            dependencies: [
                "KeychainHTTP", "KeychainAPI", "KeychainCore", "KeychainConcurrency", "CMicroHTTPD",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // Over KeychainCore for `TrustedProxies`, so that a bad `server.trustedProxies` is refused at load
        // by the parser the server resolves client addresses with.
        .target(name: "KeychainConfig", dependencies: ["KeychainCore"], swiftSettings: swiftSettings),
        // The wiring: the app `keychaind serve` runs (vault, observe, refresher, responder, server),
        // a library so that tests can serve the same app in process.
        .target(
            name: "KeychaindApp",
            dependencies: [
                "KeychainCore", "KeychainAPI", "KeychainStore", "KeychainSQLite", "KeychainPostgreSQL", "KeychainHTTP",
                "KeychainObservability", "MicroHTTPDServer", "KeychainConfig", "KeychainRefresh", "KeychainLogin",
                "KeychainConnect",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "keychaind",
            dependencies: [
                "KeychaindApp", "KeychainAPI", "KeychainStore", "KeychainSQLite", "KeychainPostgreSQL",
                "KeychainObservability", "KeychainConfig", "KeychainHTTP", "KeychainCore",
                "CProcessHardening",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings + faultInjection),
        // COpenSSL for SecKey (RSA and EC keys, docs/decisions.md "SecKey over OpenSSL").
        .target(
            name: "KeychainClient",
            dependencies: [
                "KeychainAPI", "KeychainCore", "COpenSSL",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "BackendServiceExample", dependencies: ["KeychainClient"], path: "Examples/BackendService",
            swiftSettings: swiftSettings),
        // The storage protocols' conformance suites need KeychainStore's (`package`) protocols.
        .target(name: "KeychainTestSupport", dependencies: ["KeychainCore", "KeychainStore"], swiftSettings: swiftSettings),
        // Test-only: TestApp, the real app (KeychaindApp) served in process or on a loopback port.
        .target(
            name: "KeychaindTesting",
            dependencies: [
                "KeychaindApp", "KeychainHTTP", "KeychainAPI", "KeychainConfig", "KeychainStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // MARK: Tests
        // Core's service tests spell their requests as the API does (KeychainAPI's decoders):
        // the shortest way to write a query, and the one a reader of docs/api.md knows.
        .testTarget(
            name: "KeychainCoreTests", dependencies: ["KeychainCore", "KeychainAPI", "KeychainTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainAPITests",
            dependencies: [
                "KeychainAPI", "KeychainCore", "KeychainTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainConcurrencyTests", dependencies: ["KeychainConcurrency"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainStoreTests",
            dependencies: [
                "KeychainStore", "KeychainSQLite", "KeychainPostgreSQL", "KeychainCore", "KeychainConcurrency",
                "KeychainTestSupport", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings + faultInjection),
        .testTarget(
            name: "KeychainHTTPTests",
            dependencies: [
                "KeychainHTTP", "KeychainObservability", "KeychainAPI", "KeychainCore", "KeychainTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // The app as keychaind serves it (TestApp): routes, middleware and wiring together, no binary spawned.
        .testTarget(
            name: "KeychaindAppTests",
            dependencies: [
                "KeychaindTesting", "KeychaindApp", "KeychainHTTP", "KeychainAPI", "KeychainConfig", "KeychainCore",
                // The async client against the app on a loopback port.
                "KeychainClient",
                // A router of a test's own served by the transport (methods libmicrohttpd passes on).
                "MicroHTTPDServer", "KeychainTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainObservabilityTests", dependencies: ["KeychainObservability"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainConfigTests", dependencies: ["KeychainConfig", "KeychainCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainJOSETests", dependencies: ["KeychainJOSE", "KeychainAPI", "KeychainCore"],
            resources: [.copy("Vectors")], swiftSettings: swiftSettings),
        .testTarget(name: "KeychainClientTests", dependencies: ["KeychainClient"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "keychaind", "KeychainAPI", "KeychainClient", "KeychainRefresh", "KeychainCore",
                // The issuer key cache under a clock the test moves (against oidc_issuer.py).
                "KeychainLogin", "KeychainJOSE",
                // A token's record read from the in-process app's vault.
                "KeychaindApp", "KeychainStore",
                // The cluster tests' PostgreSQL (ThrowawayPostgres).
                "KeychainTestSupport",
                // The suites that check answers over loopback, not the process: the app in process (TestApp).
                "KeychaindTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // A client test calls from a NIO event loop thread.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The refresh tests' OAuth 2.0 server and the login tests' OpenID Connect issuer, run
            // with python3 from where they lie.
            exclude: ["Support/oauth_server.py", "Support/oidc_issuer.py", "Support/webhook_receiver.py"],
            swiftSettings: swiftSettings + faultInjection),
        // The seeds' Apple code compiled from its own files with `import Security` changed to
        // `import KeychainClient`, run against the real binary (docs/decisions.md, "Seed code tests"):
        // the tutorial's SecureStore framework as its own module, as the tutorial builds it, so that
        // its XCTests' `@testable import SecureStore` stays; the seeds' code is Swift 5 code, compiled
        // as such (no upcoming-feature settings).
        .target(
            name: "SecureStore", dependencies: ["KeychainClient"], path: "Tests/SeedCode/SecureStore",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "SeedCodeTests", dependencies: ["SecureStore", "KeychainClient", "keychaind"],
            path: "Tests/SeedCode/SeedCodeTests", swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
