import Foundation
import KeychaindTesting
import KeychainHTTP

/// `TestApp.respond` (in process, also when the app is live) in the shape IntegrationTests' `HTTPTestClient` has (methods as text, bodies as
/// `Data` or JSON objects, answers as `[String: Any]`), so that a suite moved off the binary keeps
/// its test bodies as they read.
struct AppHTTP {
    let app: TestApp

    struct Response {
        let status: Int
        /// Header names lower-cased.
        let headers: [String: String]
        let body: Data

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil, token: String? = nil
    ) throws -> Response {
        let answer = app.respond(
            HTTPMethod(method), path, token: token, body: body.map { String(decoding: $0, as: UTF8.self) },
            headers: headers.map { (name: $0.key, value: $0.value) })
        var headers: [String: String] = [:]
        for (name, value) in answer.headers { headers[name.lowercased()] = value }
        return Response(status: answer.status, headers: headers, body: Data(answer.body))
    }

    func json(_ method: String, _ path: String, _ object: Any, token: String? = nil) throws -> Response {
        try send(method, path, body: try JSONSerialization.data(withJSONObject: object), token: token)
    }
}

extension TestApp {
    var http: AppHTTP { AppHTTP(app: self) }
}
