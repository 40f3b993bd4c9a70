import KeychainAPI
import KeychainCore
import Logging

/// The chain's end: the route's handler, or 404 (no route has the path) or 405 with `Allow` (no
/// route has the path with this method), in docs/api.md's error shape.
struct RouteResponder: Middleware {
    /// For handlers' errors that are no `KeychainError`.
    let logger: Logger

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        guard let route = exchange.route else {
            exchange.osStatus = KeychainError.Code.unimplemented.rawValue
            let request = context.request
            guard !exchange.allowedMethods.isEmpty else {
                return .error(KeychainError(.unimplemented, "no route \(request.method) \(request.path)"), status: 404)
            }
            // On Vault's surface as OpenBao answers: 405 `{"errors":[]}`.
            var answer =
                exchange.vaultErrors
                ? HTTPResponse.json(status: 405, VaultErrors([]))
                : HTTPResponse.error(KeychainError(.unimplemented, "\(request.method) is not allowed here"), status: 405)
            answer.headers.append(("Allow", exchange.allowedMethods.map(\.rawValue).joined(separator: ", ")))
            return answer
        }
        do {
            if let problem = context.parameters.problem { throw problem }
            let response = try route.handler(context)
            exchange.osStatus = response.status < 400 ? 0 : nil
            return response
        } catch let pending as ExchangeInProgress {
            exchange.awaited = pending
            return HTTPResponse(status: 503)
        } catch {
            return exchange.answer(error, logger: logger)
        }
    }
}
