/// What a token may hold to be answered inside `Authorization: Bearer …`: no control character
/// (C0, DEL, C1). A CR or LF there splits the header of whoever copies it into a request (a
/// header injection at the caller's), so such tokens are refused where they are stored and never
/// answered as a header.
public enum BearerToken {
    /// Whether UTF-8 `bytes` hold a control character (U+0000–U+001F, U+007F, U+0080–U+009F).
    public static func hasControlCharacter(_ bytes: some Collection<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) { return true }
            previous = byte
        }
        return false
    }

    /// errSecParam naming `name` when `token` holds a control character.
    static func check(_ token: String, _ name: String) throws {
        guard hasControlCharacter(token.utf8) else { return }
        throw KeychainError.param("\"\(name)\" holds a control character (CR, LF, ...), which no header may carry")
    }
}
