import Foundation
import KeychainAPI
import KeychainCore
public import KeychainHTTP

extension Router {
    /// The connect flow's routes (docs/api.md, "Getting the first token"): `POST /connect` and
    /// `GET /connect/{connectId}[?wait=]` for clients; the browser's legs `GET
    /// /connect/{connectId}/go` and `GET /oauth/callback` without a token (an unknown session or
    /// state spends the address's failed-authentication budget, as a refused token does).
    public mutating func addConnectRoutes(flow: ConnectFlow) {
        add(.post, "/connect", access: .client, audit: .none) { context in
            .json(status: 201, try flow.start(ConnectStartRequest(decoding: context.jsonBody()), client: context.caller))
        }
        add(.get, "/connect/{connectId}/go", access: .open, audit: .pathParameters) { context in
            try flow.go(id: context.parameters["connectId"] ?? "", request: context.request)
        }
        add(.get, "/oauth/callback", access: .open, audit: .none) { context in
            try flow.callback(context.request)
        }
        add(.get, "/connect/{connectId}", access: .client, audit: .pathParameters) { context in
            let id = context.parameters["connectId"] ?? ""
            let wait = try Self.waitSeconds(context.request, limit: flow.settings.maxWaitSeconds)
            let session = try flow.session(id: id, client: context.caller)
            let now = flow.now
            let left = min(TimeInterval(wait), session.expiresAt.timeIntervalSince(now))
            guard session.outcome(at: now) == .pending, left > 0, context.exchangeWait != .stored else {
                return .json(ConnectSessionAnswer(session, at: now))
            }
            guard let ended = flow.waiters.beginWait(on: id, by: context.caller.name, seconds: left) else {
                var refusal = HTTPResponse.error(
                    KeychainError.param(
                        "this client already holds \(flow.waiters.maxPerClient) waits (connect.maxWaitsPerClient); "
                            + "retry when one has ended"),
                    status: 429)
                refusal.headers.append(("Retry-After", "1"))
                return refusal
            }
            // Off the worker: the transport suspends the request and asks again (`.stored`) once
            // the session ends or the wait is over. In process, this thread waits.
            guard context.exchangeWait == .block else { throw ExchangeInProgress(exchange: ended, waitLimit: left) }
            ended.wait(upTo: left)
            return .json(ConnectSessionAnswer(try flow.session(id: id, client: context.caller), at: flow.now))
        }
    }

    /// `wait` in whole seconds, 0 when absent, capped at `limit` (connect.maxWaitSeconds).
    static func waitSeconds(_ request: HTTPRequest, limit: Int) throws -> Int {
        var wait = 0
        for item in request.queryItems {
            guard item.name == "wait" else { throw KeychainError.param("unknown query parameter \"\(item.name)\"") }
            guard let seconds = Int(item.value), seconds >= 0 else {
                throw KeychainError.param("\"wait\" must be a whole number of seconds ≥ 0")
            }
            wait = min(seconds, limit)
        }
        return wait
    }
}
