import KeychainCore
import Testing

@testable import KeychainHTTP

struct RouterTests {
    private func router() -> Router {
        var router = Router()
        router.add(.get, "/items/{class}", access: .open, audit: .none) { _ in HTTPResponse(status: 200) }
        router.add(.delete, "/items/{class}", access: .open, audit: .none) { _ in HTTPResponse(status: 200) }
        router.add(.get, "/items/{class}/{ref}", access: .open, audit: .none) { _ in HTTPResponse(status: 200) }
        return router
    }

    @Test(arguments: ["/items/key", "/v1/items/key"])
    func bothSpellingsReachTheSameRoute(path: String) {
        guard case .found(let route, let parameters) = router().match(method: .get, path: path) else {
            Issue.record("no match for \(path)")
            return
        }
        #expect(route.pattern == "/items/{class}")
        #expect(parameters == ["class": "key"])
    }

    /// Parameters are cut from the path's bytes: multi-byte UTF-8, spaces and a decoded `/`-free
    /// `%` survive whole, and each parameter is its own segment.
    @Test(arguments: [
        ("/v1/items/key/서비스", "서비스"), ("/items/key/a b%c", "a b%c"), ("/items/key/é", "é"), ("/items/key/{ref}", "{ref}"),
    ])
    func parametersKeepTheirBytes(path: String, reference: String) {
        guard case .found(let route, let parameters) = router().match(method: .get, path: path) else {
            Issue.record("no match for \(path)")
            return
        }
        #expect(route.pattern == "/items/{class}/{ref}")
        #expect(parameters == ["class": "key", "ref": reference])
    }

    @Test func pathParametersAreFoundByNameAndCompareInAnyOrder() {
        guard case .found(_, let parameters) = router().match(method: .get, path: "/items/key/r1") else {
            Issue.record("no match")
            return
        }
        #expect(parameters["class"] == "key" && parameters["ref"] == "r1")
        #expect(parameters["service"] == nil)
        #expect(parameters == ["ref": "r1", "class": "key"])
        #expect(parameters != ["class": "key", "ref": "r2"])
        #expect(parameters != ["class": "key"])
        #expect(parameters.map(\.name) == ["class", "ref"], "in the pattern's order")
    }

    @Test func wrongMethodListsTheAllowedOnes() {
        guard case .methodNotAllowed(let allowed, _) = router().match(method: .post, path: "/v1/items/key") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == [.get, .head, .delete])
    }

    @Test func headIsAnsweredByTheGetRoute() {
        guard case .found(let route, _) = router().match(method: .head, path: "/v1/items/key") else {
            Issue.record("HEAD should reach the GET route")
            return
        }
        #expect(route.method == .get)
    }

    /// An empty segment never stands for a parameter: `/items/key/` with an empty reference must
    /// not become the whole-class route (a PATCH there would rewrite every item).
    @Test(arguments: [
        "/", "/v1", "/v2/items/key", "/items", "/items/key/ref/more", "/v1/v1/items/key", "/v1/items/key/",
        "//items//key", "/items//", "/v1/items/key//", "", "v1", "/v1/", "/items/", "/V1/items/key", "/v1items/key",
    ])
    func unknownPathsAreNotFound(path: String) {
        guard case .notFound = router().match(method: .get, path: path) else {
            Issue.record("\(path) should not match")
            return
        }
    }

    @Test func everyErrorStatusMapsToTheContractsHTTPStatus() {
        let table: [(KeychainError.Code, Int)] = [
            (.param, 400), (.noSuchAttr, 400), (.noSuchClass, 404), (.authFailed, 401),
            (.missingEntitlement, 403), (.itemNotFound, 404), (.duplicateItem, 409),
            (.interactionNotAllowed, 503), (.decode, 500), (.io, 500),
        ]
        for (code, status) in table {
            #expect(KeychainError(code).httpStatus == status, "\(code)")
        }
    }
}
