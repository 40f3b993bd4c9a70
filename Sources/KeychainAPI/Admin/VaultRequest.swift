import KeychainCore

/// The arguments of the vault routes (`/admin/lock`, `unlock`, `rotate`, `rekey`, `backup`,
/// `vault`): none, but `rotate`'s `?reencrypt=true|false`. A body, if any, is `{}`.
public struct VaultRequest: Sendable {
    public var reencrypt = false

    /// Decodes the query string, then the body (`body` is asked for only after the query
    /// string passed, and answers nil when the request has none). A query parameter the route
    /// does not take, or a body member, is errSecParam naming it.
    public init(
        decoding query: [QueryParameter], body: () throws -> JSONBody?, allowingReencrypt: Bool = false
    ) throws {
        for parameter in query where !(allowingReencrypt && parameter.name == "reencrypt") {
            throw KeychainError.param("unknown query parameter \"\(parameter.name)\"")
        }
        if let (key, _) = try body()?.members.first { throw KeychainError.param("unknown key \"\(key)\"") }
        guard let value = query.last(where: { $0.name == "reencrypt" })?.value else { return }
        guard let flag = Bool(value) else { throw KeychainError.param("\"reencrypt\" must be true or false") }
        reencrypt = flag
    }
}
