import KeychainCore

/// Answers a failed authentication from an address beyond its budget (`AuthFailureLimiter`) with
/// 429 and `Retry-After` instead of 401. Only refused tokens and refused logins are looked at
/// (`AuthenticationMiddleware` notes the first, the login route the second), so valid tokens never
/// wait for the limiter; a login from an address that has spent its budget is refused before
/// anything else. With no limiter, passes the request on.
struct AuthFailureLimitMiddleware<Next: Middleware>: Middleware {
    let limiter: AuthFailureLimiter?
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        if exchange.route?.access == .login, let limiter, limiter.isSpent(for: context.request.remoteAddress),
            let wait = limiter.recordFailure(from: context.request.remoteAddress)
        {
            exchange.throttled = true
            return Self.tooManyFailures(retryAfterSeconds: wait, &exchange)
        }
        let response = next.respond(to: &context, &exchange)
        guard exchange.refusal != nil || response.failedLogin, let limiter,
            let wait = limiter.recordFailure(from: context.request.remoteAddress)
        else { return response }
        exchange.throttled = true
        return Self.tooManyFailures(retryAfterSeconds: wait, &exchange)
    }

    /// 429, `Retry-After`, and the route's error shape with errSecAuthFailed (docs/api.md,
    /// "Errors"; docs/decisions.md, "Hardening").
    static func tooManyFailures(retryAfterSeconds: Int, _ exchange: inout Exchange) -> HTTPResponse {
        var answer = exchange.refuse(
            KeychainError(
                .authFailed,
                "too many failed authentications from this address; retry after \(retryAfterSeconds) s"),
            status: 429)
        answer.headers.append(("Retry-After", String(retryAfterSeconds)))
        return answer
    }
}
