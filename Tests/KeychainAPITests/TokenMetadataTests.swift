import Foundation
import KeychainAPI
import KeychainCore
import Testing

/// Token metadata in an access token's `generic` bytes: the stored form is unchanged (vaults
/// written before read the same), and it is read as JSON, not matched by prefix and suffix.
struct TokenMetadataTests {
    static let format = TokenMetadataJSON()
    static let expiry = Date(timeIntervalSince1970: 1_795_255_200.123)
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    @Test func theStoredFormIsTheOneEarlierVersionsWrote() {
        #expect(Self.format.encode(TokenMetadata(expiresAt: Self.expiry))
            == Array(#"{"expiresAt":"2026-11-21T10:00:00.123Z"}"#.utf8))
        #expect(Self.format.decode(Self.format.encode(TokenMetadata(expiresAt: Self.expiry))) == TokenMetadata(expiresAt: Self.expiry))
    }

    @Test(arguments: [
        (#"{"expiresAt":"2026-11-21T10:00:00.123Z"}"#, "2026-11-21T10:00:00.123Z"),
        (#"{"expiresAt":"2026-11-21T12:00:00+02:00"}"#, "2026-11-21T10:00:00Z"),
        (#" { "expiresAt" : "2026-11-21T10:00:00Z" } "#, "2026-11-21T10:00:00Z"),
        (#"{"refresh":{"url":"https://x"},"expiresAt":"2026-11-21T10:00:00Z","n":[1]}"#, "2026-11-21T10:00:00Z"),
        (#"{"expiresAt":"2026\u002d11-21T10:00:00Z"}"#, "2026-11-21T10:00:00Z"),
    ])
    func anObjectWithAnExpiryIsRead(text: String, expected: String) {
        #expect(Self.format.decode(Array(text.utf8))?.expiresAt == RFC3339.parse(expected))
        #expect(Self.format.decode(Self.bom + Array(text.utf8))?.expiresAt == RFC3339.parse(expected), "after a BOM")
    }

    @Test(arguments: [
        #"{}"#, #"{"expiresAt":null}"#, #"{"expiresAt":12}"#, #"{"expiresAt":""}"#, #"{"expiresAt":"2026-13-01T00:00:00Z"}"#,
        #"{"expiresAt":"\u03012026-11-21T10:00:00Z"}"#,
    ])
    func anObjectWithoutAReadableExpiryHasNone(text: String) {
        #expect(Self.format.decode(Array(text.utf8)) == TokenMetadata())
    }

    @Test(arguments: [
        Array("something else".utf8), [], bom, bom + bom + Array(#"{"expiresAt":"2026-11-21T10:00:00Z"}"#.utf8),
        Array(#"{"expiresAt":"2026-11-21T10:00:00Z"}"#.utf8) + Array("\u{301}".utf8),
        [0xFF] + Array(#"{"expiresAt":"2026-11-21T10:00:00Z"}"#.utf8),
        Array(#"{"expiresAt":"2026-11-21T10:00:00Z"#.utf8) + [0xFF] + Array(#""}"#.utf8),
        Array(#"{"expiresAt":"#.utf8), Array(#"["expiresAt"]"#.utf8), Array(#""expiresAt""#.utf8),
    ] as [[UInt8]])
    func bytesThatAreNoMetadataObjectHoldNone(bytes: [UInt8]) {
        #expect(Self.format.decode(bytes) == nil)
    }
}
