public import KeychainCore

extension TokenNaming {
    /// Decodes the naming of any token route: the service in the path, `?user=NAME` and
    /// `?accessGroup=GROUP`. Anything else is errSecParam naming the parameter.
    public init(service: String, decoding query: [QueryParameter]) throws {
        guard !service.isEmpty else { throw KeychainError.param("the service in the path is empty") }
        try ItemArguments.rejectDuplicates(query) { $0.name }
        self.init(service: service)
        for parameter in query {
            switch parameter.name {
            case "user":
                guard !parameter.value.isEmpty else { throw KeychainError.param("\"user\" must be a non-empty string") }
                user = parameter.value
            case "accessGroup":
                guard !parameter.value.isEmpty else {
                    throw KeychainError.param("\"accessGroup\" must be a non-empty string")
                }
                accessGroup = parameter.value
            default:
                throw KeychainError.param(
                    "unknown parameter \"\(parameter.name)\"; the token routes take user and accessGroup")
            }
        }
    }

    /// The query string that decodes to this naming (the client's side; the service goes in the path).
    public var queryParameters: [QueryParameter] {
        var parameters: [QueryParameter] = []
        if let user { parameters.append(QueryParameter(name: "user", value: user)) }
        if let accessGroup { parameters.append(QueryParameter(name: "accessGroup", value: accessGroup)) }
        return parameters
    }
}
