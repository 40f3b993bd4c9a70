/// Counts each request and its duration by route, method and status (`RequestMetrics`).
public struct MetricsMiddleware: Middleware {
    private let metrics: RequestMetrics

    public init(_ metrics: RequestMetrics) { self.metrics = metrics }

    public func respond(to request: HTTPRequest, context: inout RequestContext, next: Next) -> HTTPResponse {
        let response = next(request, &context)
        metrics.record(
            route: context.routeName, method: request.method, status: response.status,
            seconds: Double(context.elapsedNanoseconds()) / 1_000_000_000)
        return response
    }
}
