import KeychainCore

/// Answers a failed authentication from an address beyond its budget (`AuthFailureLimiter`) with
/// 429 and `Retry-After` instead of 401. Only failures are looked at (`AuthenticationMiddleware`
/// marks them), so valid tokens never wait for the limiter.
public struct AuthFailureLimitMiddleware: Middleware {
    private let limiter: AuthFailureLimiter

    public init(_ limiter: AuthFailureLimiter) { self.limiter = limiter }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        let response = next(request, &context)
        guard context.authenticationFailed, let wait = limiter.recordFailure(from: request.remoteAddress) else {
            return response
        }
        return Self.tooManyFailures(retryAfterSeconds: wait)
    }

    /// 429, `Retry-After`, and the error shape with errSecAuthFailed (an extension of api.md's
    /// table, docs/decisions.md "Hardening").
    static func tooManyFailures(retryAfterSeconds: Int) -> HTTPResponse {
        var answer = HTTPResponse.error(
            KeychainError(
                .authFailed,
                "too many failed authentications from this address; retry after \(retryAfterSeconds) s"),
            status: 429)
        answer.headers.append(("Retry-After", String(retryAfterSeconds)))
        return answer
    }
}
