import KeychainAPI
public import KeychainCore

extension Router {
    /// OAuth providers (admin clients only): `PUT`/`GET`/`DELETE /admin/providers/{name}` and
    /// `GET /admin/providers`. No answer carries a client secret. A provider that refresh
    /// settings still name (`refreshSettings`) is not removed: errSecParam with their count.
    public mutating func addProviderRoutes(providers: any ProviderStore, refreshSettings: RefreshSettingStore) {
        add(.put, "/admin/providers/{name}", access: .admin, audit: .pathParameters) { context in
            let provider = try ProviderRequest.provider(named: context.parameters["name"] ?? "", decoding: context.jsonBody())
            try providers.save(provider)
            return .json(ProviderAnswer.provider(provider))
        }
        add(.get, "/admin/providers", access: .admin, audit: .none) { _ in
            .json(ProviderAnswer.providers(try providers.list()))
        }
        add(.get, "/admin/providers/{name}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["name"] ?? ""
            guard let provider = try providers.provider(named: name) else { throw Self.noProvider(name) }
            return .json(ProviderAnswer.provider(provider))
        }
        add(.delete, "/admin/providers/{name}", access: .admin, audit: .pathParameters) { context in
            let name = context.parameters["name"] ?? ""
            let naming = try refreshSettings.count(namingProvider: name)
            guard naming == 0 else {
                throw KeychainError.param(
                    "provider \"\(name)\" is named by \(naming) refresh setting\(naming == 1 ? "" : "s"); "
                        + "remove or replace \(naming == 1 ? "it" : "them") first (DELETE or PUT /v1/tokens/{service}/refresh)")
            }
            guard try providers.delete(named: name) else { throw Self.noProvider(name) }
            return .json(StatusAnswer.count(.deleted, 1))
        }
    }

    private static func noProvider(_ name: String) -> KeychainError {
        KeychainError.itemNotFound("no provider named \"\(name)\"")
    }
}
