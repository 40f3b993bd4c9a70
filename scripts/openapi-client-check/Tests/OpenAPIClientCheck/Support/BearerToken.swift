import Foundation
import HTTPTypes
import OpenAPIRuntime

/// `Authorization: Bearer <token>` on every request: openapi.yaml's `bearer` security scheme,
/// which generated clients leave to a middleware.
struct BearerToken: ClientMiddleware {
    let token: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
