/// One `name=value` of a query string, percent-decoded: how the API's GET, PATCH and DELETE
/// requests carry their arguments, and the token routes their naming.
public struct QueryParameter: Sendable, Equatable {
    public let name: String
    public let value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
