import KeychainCore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP face of keychaind: routing, authentication, the error shape and the request log.
/// Transport-free, so tests drive it in process and libmicrohttpd serves it unchanged.
public struct KeychainApplication: HTTPResponder {
    private let router: Router
    private let authenticator: Authenticator
    private let logger: Logger

    public init(router: Router, authenticator: Authenticator, logger: Logger) {
        self.router = router
        self.authenticator = authenticator
        self.logger = logger
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = Self.monotonicNanoseconds()
        var routeName = "unmatched"
        var clientName: String?
        let response: HTTPResponse
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            response = .error(
                KeychainError(.unimplemented, "no route \(request.method) \(request.path)"), status: 404)
        case .methodNotAllowed(let allowed):
            var answer = HTTPResponse.error(
                KeychainError(.unimplemented, "\(request.method) is not allowed here"), status: 405)
            answer.headers.append(("Allow", allowed.map(\.rawValue).joined(separator: ", ")))
            response = answer
        case .found(let route, let parameters):
            routeName = route.pattern
            do {
                let client = try authorize(request, for: route.access)
                clientName = client?.name
                response = try route.handler(RequestContext(request: request, parameters: parameters, client: client))
            } catch let error as KeychainError {
                response = .error(error)
            } catch {
                logger.error("unexpected error in \(route.pattern): \(type(of: error))")
                response = .error(KeychainError.io("internal error"))
            }
        }
        let elapsed = Double(Self.monotonicNanoseconds() - started) / 1_000_000
        logger.info(
            "request",
            metadata: [
                "method": "\(request.method)", "route": "\(routeName)", "status": "\(response.status)",
                "ms": "\((elapsed * 1000).rounded() / 1000)", "client": "\(clientName ?? "-")",
            ])
        return response
    }

    private func authorize(_ request: HTTPRequest, for access: RouteAccess) throws -> Client? {
        switch access {
        case .open:
            return nil
        case .client:
            return try authenticator.authenticate(request)
        case .admin:
            let client = try authenticator.authenticate(request)
            guard client.role == .admin else {
                throw KeychainError.missingEntitlement("this route needs an admin client")
            }
            return client
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
