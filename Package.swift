// swift-tools-version:6.1
import PackageDescription

/// Layers, dependencies pointing inward:
///   KeychainCore  ←  KeychainStore, KeychainAPI  ←  KeychainHTTP  ←  MicroHTTPDServer  ←  keychaind
/// C is reached only through the three system-library modules, and only from KeychainStore and
/// MicroHTTPDServer (see docs/decisions.md).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

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
        // Tests only: property-based fuzzing of the JSON and request parsers (docs/reliability.md).
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

        // MARK: Swift layers
        .target(name: "KeychainCore", swiftSettings: swiftSettings),
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainCore", "CSQLite", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "StorageBench",
            dependencies: ["KeychainStore", "KeychainCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        .target(name: "KeychainAPI", dependencies: ["KeychainCore"], swiftSettings: swiftSettings),
        .target(
            name: "KeychainHTTP",
            dependencies: [
                "KeychainCore", "KeychainAPI",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "MicroHTTPDServer",
            dependencies: [
                "KeychainHTTP", "CMicroHTTPD",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(name: "KeychainConfig", swiftSettings: swiftSettings),
        .executableTarget(
            name: "keychaind",
            dependencies: [
                "KeychainCore", "KeychainStore", "KeychainHTTP", "MicroHTTPDServer", "KeychainConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(name: "KeychainClient", dependencies: ["KeychainAPI", "KeychainCore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "BackendServiceExample", dependencies: ["KeychainClient"], path: "Examples/BackendService",
            swiftSettings: swiftSettings),
        .target(name: "KeychainTestSupport", dependencies: ["KeychainCore"], swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(
            name: "KeychainCoreTests", dependencies: ["KeychainCore", "KeychainTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainStoreTests",
            dependencies: ["KeychainStore", "KeychainCore", "KeychainTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KeychainHTTPTests",
            dependencies: [
                "KeychainHTTP", "KeychainAPI", "KeychainCore", "KeychainTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "KeychainConfigTests", dependencies: ["KeychainConfig"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "keychaind", "KeychainAPI", "KeychainClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings),
    ]
)
