import Foundation
import KeychaindTesting
import Testing

/// What the real app answers a request no route takes, in the error shape of every answer.
struct RouteShapeTests {
    @Test func unknownRouteIs404AndWrongMethodIs405InTheErrorShape() throws {
        let server = try TestApp()
        defer { server.stop() }
        let missing = try server.http.send("GET", "/v1/nothing-here")
        #expect(missing.status == 404)
        #expect(missing.json["status"] is Int)
        #expect(missing.json["error"] is String)
        #expect(missing.json["message"] is String)

        let wrongMethod = try server.http.send("DELETE", "/v1/health")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        #expect(wrongMethod.json["error"] is String)
    }
}
