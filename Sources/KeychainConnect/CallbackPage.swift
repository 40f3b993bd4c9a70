public import KeychainHTTP

/// The page the browser sees when a session ends without a `returnTo`, or when its leg is
/// refused: static HTML that names only the outcome and an error code (one of RFC 6749
/// §4.1.2.1's or keychaind's own, all `[a-z_]`), never the provider's `error_description`, the
/// `code` or the `state`; served with headers that let it run nothing, be framed by nobody, be
/// kept by no cache and leak no URL in a `Referer`.
public enum CallbackPage {
    /// The headers of every page of the browser's legs (docs/api.md, the connect flow).
    public static let headers: [(name: String, value: String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// 200: the account is connected.
    public static var connected: HTTPResponse {
        page(status: 200, title: "Connected", text: "The account is connected. You can close this window.")
    }

    /// The session failed with `error` (200: the flow ran and ended, the page says how).
    public static func failed(_ error: String) -> HTTPResponse {
        page(status: 200, title: "Not connected", text: "The account was not connected (\(code(error))). You can close this window.")
    }

    /// 400: the request cannot end a session (`reason` is one of a fixed set of sentences).
    public static func refused(_ reason: String, error: String? = nil) -> HTTPResponse {
        page(status: 400, title: "Not connected", text: reason + (error.map { " (\(code($0)))" } ?? ""))
    }

    /// A 303 to `location`, with the page's headers (and no body).
    public static func redirect(to location: String, extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: headers + [("Location", location)] + extraHeaders)
    }

    /// Only `[a-z0-9_]`: whatever else a code held is dropped.
    static func code(_ error: String) -> String {
        String(error.unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }.prefix(64))
    }

    private static func page(status: Int, title: String, text: String) -> HTTPResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">\
            <title>\(title)</title></head>
            <body><h1>\(title)</h1><p>\(text)</p></body></html>

            """
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }
}
