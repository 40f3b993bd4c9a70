import Foundation
import KeychaindTesting
import Testing

/// Issue 29, item 5, on the real app (TestApp, in process): `quota.items` and `quota.secretBytes` from the environment, and
/// the answer past them (errSecDiskFull, 507, the error body naming the setting, no secret).
@Suite(.serialized)
struct GroupQuotaLiveTests {
    @Test func writesPastAGroupsQuotaAreErrSecDiskFull() throws {
        let server = try TestApp(environment: ["KEYCHAIND_QUOTA_ITEMS": "2", "KEYCHAIND_QUOTA_SECRET_BYTES": "100"])
        defer { server.stop() }
        let http = server.http
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "tenant", "accessGroups": ["tenant"]], token: server.adminToken)
        let token = try #require(created.json["token"] as? String)
        func add(_ account: String, _ value: String) throws -> AppHTTP.Response {
            try http.json("POST", "/v1/items/genericPassword", ["service": "q", "account": account, "value": value], token: token)
        }
        #expect(try add("a", String(repeating: "s", count: 60)).status == 201)
        let tooLarge = try add("b", String(repeating: "t", count: 41))
        #expect(tooLarge.status == 507, "\(tooLarge.text)")
        #expect(tooLarge.json["status"] as? Int == -34)
        #expect(tooLarge.json["error"] as? String == "errSecDiskFull")
        #expect((tooLarge.json["detail"] as? String ?? "").contains("quota.secretBytes"))
        #expect(!tooLarge.text.contains("tttt"))
        #expect(try add("b", String(repeating: "t", count: 40)).status == 201)
        let tooMany = try add("c", "")
        #expect(tooMany.status == 507 && (tooMany.json["detail"] as? String ?? "").contains("quota.items"), "\(tooMany.text)")
        // A shrinking update goes through; a delete frees room.
        let shrunk = try http.json("PATCH", "/v1/items/genericPassword?service=q&account=a", ["value": "s"], token: token)
        #expect(shrunk.status == 200, "\(shrunk.text)")
        #expect(try http.send("DELETE", "/v1/items/genericPassword?service=q&account=b", token: token).status == 200)
        #expect(try add("c", String(repeating: "u", count: 99)).status == 201)
    }
}
