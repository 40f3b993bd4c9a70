import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Logging
import Synchronization
import Testing

@testable import KeychainHTTP

/// `sys/health` when PostgreSQL does not answer: 503, but not sealed.
struct SysRoutesTests {
    @Test func unreachableStorageIs503AndNotSealed() throws {
        let reachable = Mutex(false)
        var router = Router()
        router.addSysRoutes(
            isLocked: { false }, storage: { StorageHealth(backend: .postgresql, reachable: reachable.withLock { $0 }) },
            clusterID: "c0ffee00-0000-4000-8000-000000000000", secretMountAlias: false)
        let application = KeychainApplication(
            router: router, authenticator: Authenticator(clients: InMemoryClientStore(), tokens: TestTokenIssuer()),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        func health(_ query: [HTTPRequest.QueryItem] = []) -> HTTPResponse {
            application.respond(to: HTTPRequest(method: .get, path: "/v1/sys/health", queryItems: query))
        }
        let down = health()
        let body = try JSONValue.parse(down.body)
        #expect(down.status == 503 && body["sealed"] == .bool(false) && body["cluster_id"] != nil)
        // No override turns it into an active node's answer.
        #expect(health([.init(name: "activecode", value: "200")]).status == 503)
        let status = try JSONValue.parse(
            application.respond(to: HTTPRequest(method: .get, path: "/v1/sys/seal-status")).body)
        #expect(status["storage_type"] == .string("postgresql") && status["sealed"] == .bool(false))
        reachable.withLock { $0 = true }
        #expect(health().status == 200)
    }
}
