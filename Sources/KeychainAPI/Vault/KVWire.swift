public import Foundation
public import KeychainCore

/// The bodies of the KV version 2 routes, read as OpenBao reads them: an empty body is an empty
/// object, unknown keys are ignored and named in `warnings` (`unrecognized`).
public enum KVRequest {
    /// OpenBao's warning for the keys it ignored, names sorted as Go's `strutil` sorts them.
    public static func warning(ignoring names: [String]) -> [String] {
        guard !names.isEmpty else { return [] }
        let sorted = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return ["Endpoint ignored these unrecognized parameters: [\(sorted.joined(separator: " "))]"]
    }

    /// Whether `data` may be a KV secret's version: the text of a JSON object (errSecParam otherwise).
    @Sendable public static func checkData(_ data: SecretBytes) throws {
        let parsed = data.withUnsafeBytes { bytes in
            Result { () throws(JSONParseError) in try JSONValue.parse(Array(bytes)) }
        }
        let value: JSONValue
        switch parsed {
        case .success(let parsedValue): value = parsedValue
        case .failure(let error): throw KeychainError.param("a KV secret's data is a JSON object: \(error.description)")
        }
        guard case .object = value else { throw KeychainError.param("a KV secret's data is a JSON object, not \(value.typeName)") }
    }

    /// A body as an object's members; empty for an empty body.
    public static func members(_ body: [UInt8]) throws -> [(String, JSONValue)] {
        guard body.contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else { return [] }
        return try JSONBody(parsing: body).members
    }

    /// What a write and a patch of `data/<path>` both send: `data` (an object) and `options.cas`;
    /// other keys are named in `unrecognized`.
    private struct DataBody {
        var data: JSONValue
        var cas: Int?
        var unrecognized: [String]

        init(_ body: [UInt8]) throws {
            var data: JSONValue?
            cas = nil
            unrecognized = []
            for (name, value) in try KVRequest.members(body) {
                switch name {
                case "data":
                    guard case .object = value else { throw KeychainError.param("no data provided") }
                    data = value
                case "options":
                    guard case .object(let options) = value else { throw KeychainError.param("options must be an object") }
                    for (option, setting) in options where option == "cas" {
                        cas = try KVRequest.integer(setting, "cas")
                    }
                default:
                    unrecognized.append(name)
                }
            }
            guard let data else { throw KeychainError.param("no data provided") }
            self.data = data
        }
    }

    /// `POST data/<path>`: `data` (an object, serialized again as the version's bytes) and
    /// `options.cas`.
    public struct Write: Sendable {
        public var data: SecretBytes
        public var cas: Int?
        public var unrecognized: [String]

        public init(_ body: [UInt8]) throws {
            let sent = try DataBody(body)
            var bytes = sent.data.serialized()
            defer { SecretBytes.wipe(&bytes) }
            data = SecretBytes(bytes, lockedInMemory: false)
            cas = sent.cas
            unrecognized = sent.unrecognized
        }
    }

    /// `PATCH data/<path>` (a JSON merge patch of `data`, RFC 7396) and its `options.cas`.
    public struct Patch: Sendable {
        public var patch: JSONValue
        public var cas: Int?
        public var unrecognized: [String]

        public init(_ body: [UInt8]) throws {
            let sent = try DataBody(body)
            patch = sent.data
            cas = sent.cas
            unrecognized = sent.unrecognized
        }

        /// `data` with the patch merged in (RFC 7396: null removes a member, objects merge).
        public func merged(into data: SecretBytes) throws -> SecretBytes {
            let current = try data.withUnsafeBytes { bytes in
                try JSONValue.parse(Array(bytes))
            }
            var merged = JSONValue.mergePatch(current, patch).serialized()
            defer { SecretBytes.wipe(&merged) }
            return SecretBytes(merged, lockedInMemory: false)
        }
    }

    /// `POST delete/`, `undelete/`, `destroy/<path>`: `versions`, a list of version numbers.
    public struct Versions: Sendable {
        public var versions: [Int]
        public var unrecognized: [String]

        public init(_ body: [UInt8]) throws {
            var versions: [Int]?
            unrecognized = []
            for (name, value) in try KVRequest.members(body) {
                guard name == "versions" else {
                    unrecognized.append(name)
                    continue
                }
                switch value {
                case .array(let list): versions = try list.map { try KVRequest.integer($0, "versions") }
                case .string(let text):
                    versions = try text.split(separator: ",").map {
                        try KVRequest.integer(.string(String($0).trimmingCharacters(in: .whitespaces)), "versions")
                    }
                default: versions = [try KVRequest.integer(value, "versions")]
                }
            }
            guard let versions, !versions.isEmpty else { throw KeychainError.param("no version number provided") }
            self.versions = versions
        }
    }

    /// `POST`/`PATCH metadata/<path>`.
    public struct Metadata: Sendable {
        public var change: KVService.MetadataChange
        public var unrecognized: [String]

        public init(_ body: [UInt8]) throws {
            change = KVService.MetadataChange()
            unrecognized = []
            for (name, value) in try KVRequest.members(body) {
                switch name {
                case "max_versions": change.maxVersions = try KVRequest.integer(value, name)
                case "cas_required": change.casRequired = try KVRequest.bool(value, name)
                case "delete_version_after": change.deleteVersionAfter = try KVRequest.duration(value, name)
                case "custom_metadata":
                    switch value {
                    case .null: change.customMetadata = [:]
                    case .object(let members):
                        var custom: [String: String] = [:]
                        for (key, entry) in members {
                            guard case .string(let text) = entry else {
                                throw KeychainError.param("custom_metadata values are strings (key \(key))")
                            }
                            custom[key] = text
                        }
                        change.customMetadata = custom
                    default: throw KeychainError.param("custom_metadata is an object of strings")
                    }
                default: unrecognized.append(name)
                }
            }
        }
    }

    public static func integer(_ value: JSONValue, _ name: String) throws -> Int {
        switch value {
        case .integer(let number) where number >= 0 && number <= Int64(Int32.max): return Int(number)
        case .number(let number) where number >= 0 && number <= Double(Int32.max) && number.rounded() == number:
            return Int(number)
        case .string(let text): if let number = Int(text), number >= 0 { return number }
        default: break
        }
        throw KeychainError.param("\(name) must be a non-negative whole number")
    }

    static func bool(_ value: JSONValue, _ name: String) throws -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string("true"), .string("1"): return true
        case .string("false"), .string("0"): return false
        default: throw KeychainError.param("\(name) must be a boolean")
        }
    }

    /// Seconds: a number, or a duration text (`"1h30m"`, `"0s"`, `"90"`).
    static func duration(_ value: JSONValue, _ name: String) throws -> Int {
        switch value {
        case .integer(let seconds) where seconds >= 0 && seconds <= DurationSeconds.maximum: return Int(seconds)
        case .string(let text):
            if text == "0" || text == "0s" || text.isEmpty { return 0 }
            if let seconds = DurationSeconds.parse(text), seconds <= DurationSeconds.maximum { return Int(seconds) }
        default: break
        }
        throw KeychainError.param("\(name) must be a duration such as \"30m\" or a number of seconds")
    }

    /// Seconds as Go's `time.Duration.String()` writes them (`"1h0m0s"`, `"30m0s"`, `"0s"`), as
    /// OpenBao answers `delete_version_after`.
    public static func goDuration(_ seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        let hours = seconds / 3600, minutes = seconds % 3600 / 60, rest = seconds % 60
        if hours > 0 { return "\(hours)h\(minutes)m\(rest)s" }
        if minutes > 0 { return "\(minutes)m\(rest)s" }
        return "\(rest)s"
    }
}

extension JSONValue {
    /// RFC 7396's merge of `patch` into `target`.
    public static func mergePatch(_ target: JSONValue, _ patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var members: [(String, JSONValue)]
        if case .object(let existing) = target { members = existing } else { members = [] }
        for (name, change) in changes {
            let index = members.firstIndex { $0.0 == name }
            if change == .null {
                if let index { members.remove(at: index) }
            } else if let index {
                members[index].1 = mergePatch(members[index].1, change)
            } else {
                members.append((name, mergePatch(.null, change)))
            }
        }
        return .object(members)
    }
}

/// The `data` blocks of the KV version 2 answers, as OpenBao writes them.
public enum KVAnswer {
    /// A version's metadata (`data` of a write; `metadata` of a read).
    public static func versionMetadata(
        _ version: KVVersion, custom: [String: String], into writer: inout JSONWriter
    ) {
        writer.key("created_time")
        writer.date(version.createdTime)
        writer.key("custom_metadata")
        customMetadata(custom, into: &writer)
        writer.key("deletion_time")
        if let deletionTime = version.deletionTime { writer.date(deletionTime) } else { writer.string("") }
        writer.member("destroyed", version.destroyed)
        writer.member("version", version.number)
    }

    /// `data` of a write or a patch: the new version's metadata, with the keys the body's
    /// sender was told were ignored.
    public static func written(_ version: KVVersion, metadata: KVMetadata, unrecognized: [String]) -> VaultEnvelope {
        let custom = metadata.customMetadata
        return VaultEnvelope(warnings: KVRequest.warning(ignoring: unrecognized)) { writer in
            versionMetadata(version, custom: custom, into: &writer)
        }
    }

    /// `data` of a read: the version's data (its stored JSON text) and metadata.
    public static func read(_ found: KVService.Found) -> @Sendable (inout JSONWriter) -> Void {
        let version = found.version
        let custom = found.metadata.customMetadata
        return { writer in
            writer.key("data")
            if found.isLive, let data = version.data {
                data.withUnsafeBytes { writer.rawJSON($0) }
            } else {
                writer.null()
            }
            writer.key("metadata")
            writer.object { versionMetadata(version, custom: custom, into: &$0) }
        }
    }

    /// `data` of `metadata/<path>`.
    public static func metadata(_ metadata: KVMetadata, versions: [KVVersion]) -> @Sendable (inout JSONWriter) -> Void {
        { writer in
            writer.member("cas_required", metadata.casRequired)
            writer.member("created_time", RFC3339.format(metadata.createdTime))
            writer.member("current_metadata_version", metadata.metadataVersion)
            writer.member("current_version", metadata.currentVersion)
            writer.key("custom_metadata")
            customMetadata(metadata.customMetadata, into: &writer)
            writer.member("delete_version_after", KVRequest.goDuration(metadata.deleteVersionAfter))
            writer.member("max_versions", metadata.maxVersions)
            writer.member("metadata_cas_required", false)
            writer.member("oldest_version", metadata.oldestVersion)
            writer.member("updated_time", RFC3339.format(metadata.updatedTime))
            writer.key("versions")
            writer.object { list in
                for version in versions {
                    list.key(String(version.number))
                    list.object { entry in
                        entry.member("created_time", RFC3339.format(version.createdTime))
                        entry.member("deletion_time", version.deletionTime.map { RFC3339.format($0) } ?? "")
                        entry.member("destroyed", version.destroyed)
                    }
                }
            }
        }
    }

    /// `data` of a LIST.
    public static func keys(_ names: [String]) -> @Sendable (inout JSONWriter) -> Void {
        { writer in
            writer.key("keys")
            writer.array { list in
                for name in names { list.string(name) }
            }
        }
    }

    private static func customMetadata(_ custom: [String: String], into writer: inout JSONWriter) {
        guard !custom.isEmpty else { return writer.null() }
        writer.object { members in
            for key in custom.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                members.key(key)
                members.string(custom[key] ?? "")
            }
        }
    }
}
