public import Foundation
public import KeychainCore

/// What Vault's `sys/` routes tell about this node (docs/api.md, "Tools written for Vault"): one
/// node, initialised, sealed while the vault is locked, its storage reachable or not.
public struct VaultNodeState: Sendable {
    public var sealed: Bool
    public var storage: StorageHealth
    /// Random at initialisation, the same on every node of a PostgreSQL cluster.
    public var clusterID: String

    public init(sealed: Bool, storage: StorageHealth, clusterID: String) {
        self.sealed = sealed
        self.storage = storage
        self.clusterID = clusterID
    }

    /// Vault's `cluster_name`: keychaind's nodes share one data set and have no name of their own.
    public static let clusterName = "keychaind"
}

/// The answers of Vault's `sys/health`, `sys/seal-status` and `sys/leader`, field for field as
/// OpenBao 2.7.2 writes them (no envelope: Vault answers these bare). While sealed OpenBao leaves
/// out `cluster_name` and `cluster_id` and calls itself a standby whose replication modes are
/// `unknown`; so does keychaind, for tools that read those.
public enum VaultSysAnswer: JSONAnswer {
    case health(VaultNodeState, now: Date)
    case sealStatus(VaultNodeState)
    /// keychaind's nodes all serve: none leads (Vault's answer without HA).
    case leader

    public func encoded() -> [UInt8] {
        JSONWriter.object(capacity: 320) { answer in
            switch self {
            case .health(let state, let now):
                answer.member("initialized", true)
                answer.member("sealed", state.sealed)
                answer.member("standby", state.sealed)
                answer.member("replication_performance_mode", state.sealed ? "unknown" : "disabled")
                answer.member("replication_dr_mode", state.sealed ? "unknown" : "disabled")
                answer.member("server_time_utc", Int64(now.timeIntervalSince1970.rounded(.down)))
                answer.member("version", KeychaindVersion.current)
                if !state.sealed {
                    answer.member("cluster_name", VaultNodeState.clusterName)
                    answer.member("cluster_id", state.clusterID)
                }
            case .sealStatus(let state):
                // One master key opens the vault: Shamir's scheme with one share of one.
                answer.member("type", "shamir")
                answer.member("initialized", true)
                answer.member("sealed", state.sealed)
                answer.member("t", 1)
                answer.member("n", 1)
                answer.member("progress", 0)
                answer.member("nonce", "")
                answer.member("recovery_seal", false)
                answer.member("version", KeychaindVersion.current)
                // keychaind's builds carry no commit date: empty, which `bao status` leaves out.
                answer.member("commit_date", "")
                answer.member("migration", false)
                if !state.sealed {
                    answer.member("cluster_name", VaultNodeState.clusterName)
                    answer.member("cluster_id", state.clusterID)
                }
                answer.member("storage_type", state.storage.backend.rawValue)
            case .leader:
                answer.member("ha_enabled", false)
            }
        }
    }
}

/// Vault's description of a KV version 2 mount (`sys/internal/ui/mounts/<path>`), every field
/// OpenBao gives its `secret/`: `bao kv` reads `options.version` and `path` from it. `accessor`
/// and `uuid` are derived from the cluster and the group, so they stay the same across calls,
/// restarts and nodes, as a mount's do.
public struct VaultMountAnswer: Sendable {
    /// `<name>/`, as the caller named the mount (`secret/` through the alias).
    public var path: String
    public var group: String
    public var clusterID: String

    public init(path: String, group: String, clusterID: String) {
        self.path = path
        self.group = group
        self.clusterID = clusterID
    }

    public var envelope: VaultEnvelope {
        let path = path
        var hash = Self.fnv1a(Array(clusterID.utf8) + [0] + Array(group.utf8))
        let accessor = "kv_" + Self.hex(hash, digits: 8)
        hash = Self.fnv1a(Array(group.utf8) + [0] + Array(clusterID.utf8))
        let low = Self.fnv1a(Array(accessor.utf8) + Array(clusterID.utf8))
        let digits = Array((Self.hex(hash, digits: 16) + Self.hex(low, digits: 16)).utf8)
        let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: digits[$0], as: UTF8.self) }
            .joined(separator: "-")
        return VaultEnvelope { data in
            data.member("accessor", accessor)
            data.key("config")
            data.object { config in
                config.member("default_lease_ttl", 0)
                config.member("force_no_cache", false)
                config.member("max_lease_ttl", 0)
            }
            data.member("deprecation_status", "supported")
            data.member("description", "key/value secret storage")
            data.member("external_entropy_access", false)
            data.member("local", false)
            data.key("options")
            data.object { $0.member("version", "2") }
            data.member("path", path)
            data.member("plugin_version", "")
            data.member("running_plugin_version", "v\(KeychaindVersion.current)+builtin.keychaind")
            data.member("running_sha256", "")
            data.member("seal_wrap", false)
            data.member("type", "kv")
            data.member("uuid", uuid)
        }
    }

    /// FNV-1a, 64 bits: a stable name for a mount, not a secret's digest.
    private static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - text.utf8.count)) + text
        return String(padded.suffix(digits))
    }
}
