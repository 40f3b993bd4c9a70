import KeychainCore

/// The answer of `GET /tokens/{service}/authorization`: `{"Authorization":"Bearer …"}`, the
/// header a backend service sends upstream. The token fetch is the hot path: written straight
/// into one array of about the right size.
public struct AuthorizationAnswer: JSONAnswer {
    /// `Bearer <accessToken>`.
    public var header: String

    public init(header: String) {
        self.header = header
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: header.utf8.count + 20)
        writer.openObject()
        writer.member("Authorization", header)
        writer.closeObject()
        return writer.bytes
    }

    public init(decoding json: JSONValue) throws {
        header = try json.requiredString("Authorization", of: "the authorization answer")
    }

    /// The response header that says for how many whole seconds the answer stays fresh (until
    /// the token's `expiresAt − refreshBefore`), so that a client may keep it that long instead
    /// of asking again; absent when no expiry is stored. Not in the body, which docs/api.md
    /// fixes, and not `Cache-Control: max-age`: the answer holds a secret and stays `no-store`
    /// for every cache between keychaind and its caller (docs/decisions.md).
    public static let freshForHeader = "Keychaind-Fresh-For"

    /// The seconds a `Keychaind-Fresh-For` value says; nil for none or anything but a decimal
    /// count of seconds.
    public static func freshForSeconds(_ value: String?) -> Int? {
        guard let value, !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return Int(value)
    }
}
