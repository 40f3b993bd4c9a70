import Foundation
import Testing

@testable import KeychainCore

/// `TokenService.expiry(of:)` reads the bytes in place; it must answer what reading them as a
/// Foundation string did.
@Suite struct TokenExpiryTests {
    /// The reading it replaced: Foundation's UTF-8 decoding, then `String` prefix and suffix checks.
    static func foundationExpiry(_ bytes: [UInt8]) -> Date? {
        guard let text = String(bytes: bytes, encoding: .utf8), text.hasPrefix(TokenService.expiryPrefix),
            text.hasSuffix(TokenService.expirySuffix)
        else { return nil }
        return RFC3339.parse(
            String(text.dropFirst(TokenService.expiryPrefix.count).dropLast(TokenService.expirySuffix.count)))
    }

    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let generics: [[UInt8]] = [
        Array("{\"expiresAt\":\"2026-11-21T10:00:00.123Z\"}".utf8),
        Array("{\"expiresAt\":\"2026-11-21T12:00:00+02:00\"}".utf8),
        bom + Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\"}".utf8),
        bom + bom + Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\"}".utf8),
        Array("{\"expiresAt\":\"\u{301}2026-11-21T10:00:00Z\"}".utf8),
        Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\u{301}\"}".utf8),
        Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\"}\u{301}".utf8),
        Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\" }".utf8),
        Array("{\"expiresAt\":\"\"}".utf8),
        Array("{\"expiresAt\":\"}".utf8),
        Array("{\"expiresAt\":\"".utf8),
        Array("{\"expiresAt\":\"2026-13-01T00:00:00Z\"}".utf8),
        Array("{\"expiresAt\":\"2026-11-21T10:00:00Z".utf8) + [0xFF] + Array("\"}".utf8),
        [0xFF] + Array("{\"expiresAt\":\"2026-11-21T10:00:00Z\"}".utf8),
        Array("{\"expiresAt\": \"2026-11-21T10:00:00Z\"}".utf8),
        Array("something else".utf8),
        bom,
        [],
    ]

    @Test(arguments: generics)
    func sameAnswerAsTheFoundationReading(generic: [UInt8]) {
        let item = Item(
            itemClass: .genericPassword, persistentRef: .random(), attributes: [.generic: .data(generic)], secret: nil)
        #expect(TokenService.expiry(of: item) == Self.foundationExpiry(generic))
    }

    @Test func expiryOfAnItemWithoutGenericIsNil() {
        let item = Item(itemClass: .genericPassword, persistentRef: .random(), attributes: [:], secret: nil)
        #expect(TokenService.expiry(of: item) == nil)
        let bom = Item(
            itemClass: .genericPassword, persistentRef: .random(),
            attributes: [.generic: .data(Self.generics[2])], secret: nil)
        #expect(TokenService.expiry(of: bom) == RFC3339.parse("2026-11-21T10:00:00Z"))
    }

    @Test func utf8StringOfSecrets() {
        #expect(SecretBytes(utf8: "tök\u{0}en").utf8String() == "tök\u{0}en")
        #expect(SecretBytes([UInt8]()).utf8String() == "")
        #expect(SecretBytes([0x61, 0xFF]).utf8String() == nil)
        #expect(SecretBytes([0xED, 0xA0, 0x80]).utf8String() == nil)  // a UTF-16 surrogate
        #expect(SecretBytes([0xC0, 0xAF]).utf8String() == nil)  // overlong
        #expect(SecretBytes(utf8: "tök").utf8String(after: "Bearer ") == "Bearer tök")
        #expect(SecretBytes([UInt8]()).utf8String(after: "Bearer ") == "Bearer ")
        #expect(SecretBytes([0x61, 0xFF]).utf8String(after: "Bearer ") == nil)
    }
}
