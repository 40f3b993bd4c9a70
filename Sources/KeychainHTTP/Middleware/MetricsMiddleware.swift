/// Counts each request and its duration by route, method and status (`RequestMetrics`); with
/// no metrics, passes the request on.
struct MetricsMiddleware<Next: Middleware>: Middleware {
    let metrics: RequestMetrics?
    let next: Next

    func respond(to context: inout RequestContext, _ exchange: inout Exchange) -> HTTPResponse {
        let response = next.respond(to: &context, &exchange)
        guard exchange.awaited == nil else { return response }
        metrics?.record(
            route: exchange.routeName, method: context.request.method, status: response.status,
            seconds: Double(exchange.elapsedNanoseconds()) / 1_000_000_000)
        return response
    }
}
