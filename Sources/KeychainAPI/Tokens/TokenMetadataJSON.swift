public import KeychainCore

/// Token metadata as stored in an access token item's `generic` bytes: the UTF-8 JSON text
/// `{"expiresAt":"2026-11-21T10:00:00.123Z"}`, with `"refreshBefore":60` when a refresh setting
/// keeps the token and `"version":3` counting the stores (docs/decisions.md, "Tokens and client"). Members this version does not know
/// are skipped. Read on every token fetch, in place: no JSON value is built for `expiresAt`.
public struct TokenMetadataJSON: TokenMetadataFormat {
    public init() {}

    public func encode(_ metadata: TokenMetadata) -> [UInt8] {
        JSONWriter.object(capacity: 48) { object in
            if let expiresAt = metadata.expiresAt { object.member("expiresAt", expiresAt) }
            if let refreshBefore = metadata.refreshBefore { object.member("refreshBefore", refreshBefore) }
            if let version = metadata.version { object.member("version", version) }
        }
    }

    /// Skipped before the text, as the `String(bytes:encoding: .utf8)` this was once read through did.
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    public func decode(_ bytes: [UInt8]) -> TokenMetadata? {
        bytes.withUnsafeBufferPointer { all in
            let text = all.starts(with: Self.byteOrderMark) ? UnsafeBufferPointer(rebasing: all.dropFirst(3)) : all
            var reader = JSONReader(bytes: text)
            var metadata = TokenMetadata()
            do {
                try reader.readDocument { (document: inout JSONReader) throws(JSONParseError) in
                    try document.readObject { key, member throws(JSONParseError) in
                        if key == "expiresAt" {
                            metadata.expiresAt = try member.memberString { RFC3339.parse(utf8: $0) } ?? nil
                        } else if key == "refreshBefore" {
                            if case .integer(let seconds) = try member.memberValue(), seconds >= 0,
                                seconds <= RefreshSetting.maximumRefreshBefore
                            {
                                metadata.refreshBefore = Int(seconds)
                            }
                        } else if key == "version" {
                            if case .integer(let version) = try member.memberValue(), version > 0, version <= Int64(Int32.max) {
                                metadata.version = Int(version)
                            }
                        } else {
                            _ = try member.memberValue()
                        }
                    }
                }
            } catch {
                return nil
            }
            return metadata
        }
    }
}
