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
}
