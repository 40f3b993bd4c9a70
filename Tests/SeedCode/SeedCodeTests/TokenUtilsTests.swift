// Seed 002's keyChaingTokenUtils against keychaind (the test is the harness's, not the seed's).
import Foundation
import KeychainClient
import XCTest

final class TokenUtilsTests: LiveKeychaindTestCase {
    func testSaveLoadDeleteAndTheAuthorizationHeader() async throws {
        let utils = keyChaingTokenUtils()
        XCTAssertNil(utils.getAuthorizationHeader())
        utils.save("Gus.Awesome.right", account: "accessToken", value: "token-1")
        XCTAssertEqual(utils.load("Gus.Awesome.right", account: "accessToken"), "token-1")
        // save = delete then add: saving again replaces.
        utils.save("Gus.Awesome.right", account: "accessToken", value: "token-2")
        XCTAssertEqual(utils.load("Gus.Awesome.right", account: "accessToken"), "token-2")
        XCTAssertEqual(utils.getAuthorizationHeader(), ["Authorization": "Bearer token-2"])
        // The token route answers the same item.
        let header = try await KeychainClient.shared!.getAuthorizationHeader(service: "Gus.Awesome.right")
        XCTAssertEqual(header, ["Authorization": "Bearer token-2"])
        utils.delete("Gus.Awesome.right", account: "accessToken")
        XCTAssertNil(utils.load("Gus.Awesome.right", account: "accessToken"))
        XCTAssertNil(utils.getAuthorizationHeader())
    }
}
