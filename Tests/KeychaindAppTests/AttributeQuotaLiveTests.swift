import Foundation
import KeychaindTesting
import Testing

/// Issue 40, finding 5, on the real app (TestApp, in process): with `quota.items=5` and `quota.secretBytes=100` a client
/// stored 16 MB through 1 MB `comment` and `label` values (attributes were neither bounded nor
/// metered). One value now holds at most 4096 bytes (errSecParam, 400), and a group's attribute
/// bytes count against `quota.attributeBytes` (errSecDiskFull, 507); either way nothing changes.
@Suite(.serialized)
struct AttributeQuotaLiveTests {
    @Test func largeAttributeValuesAreRefusedAndAttributesCountAgainstTheQuota() throws {
        let server = try TestApp(environment: [
            "KEYCHAIND_QUOTA_ITEMS": "5", "KEYCHAIND_QUOTA_SECRET_BYTES": "100", "KEYCHAIND_QUOTA_ATTRIBUTE_BYTES": "10000",
            "KEYCHAIND_LIMITS_MAX_BODY_BYTES": "2000000",
        ])
        defer { server.stop() }
        let http = server.http
        let created = try http.json(
            "POST", "/v1/admin/clients", ["name": "tenant", "accessGroups": ["tenant"]], token: server.adminToken)
        let token = try #require(created.json["token"] as? String)
        func add(_ account: String, _ attributes: [String: Any]) throws -> AppHTTP.Response {
            try http.json(
                "POST", "/v1/items/genericPassword",
                attributes.merging(["service": "q", "account": account, "value": "s"]) { $1 }, token: token)
        }
        func expectParam(_ answer: AppHTTP.Response, naming attribute: String) {
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.json["error"] as? String == "errSecParam")
            let detail = answer.json["detail"] as? String ?? ""
            #expect(detail.contains("\"\(attribute)\"") && detail.contains("4096"), "\(detail)")
            #expect(!answer.text.contains("xxxx"))
        }
        func stored(_ account: String) throws -> [String: Any]? {
            let found = try http.send(
                "GET", "/v1/items/genericPassword?service=q&account=\(account)&return=attributes", token: token)
            return found.status == 200 ? found.json["item"] as? [String: Any] : nil
        }

        // The review's case: 1 MB comments and labels were stored (201), one after another.
        let megabyte = String(repeating: "x", count: 1 << 20)
        expectParam(try add("big", ["comment": megabyte]), naming: "comment")
        expectParam(try add("big", ["label": megabyte]), naming: "label")
        // The bound: 4096 UTF-8 bytes (2048 two-byte characters pass, one more does not); data
        // attributes by their decoded bytes.
        expectParam(try add("big", ["label": String(repeating: "é", count: 2049)]), naming: "label")
        expectParam(try add("big", ["generic": Data(count: 4097).base64EncodedString()]), naming: "generic")
        #expect(try stored("big") == nil)
        #expect(try add("a", ["label": String(repeating: "é", count: 2048)]).status == 201)
        #expect(try add("b", ["generic": Data(count: 4096).base64EncodedString()]).status == 201)

        // Attributes are metered: a third item of 4 KB passes quota.attributeBytes (10000).
        let full = try add("c", ["comment": String(repeating: "x", count: 4096)])
        #expect(full.status == 507, "\(full.text)")
        #expect(full.json["error"] as? String == "errSecDiskFull")
        #expect((full.json["detail"] as? String ?? "").contains("quota.attributeBytes"), "\(full.text)")
        #expect(try stored("c") == nil)

        // An update that grows attributes past the quota changes nothing; one past the bound is
        // errSecParam, on the item routes and the identity route alike.
        let grown = try http.json(
            "PATCH", "/v1/items/genericPassword?service=q&account=a", ["comment": String(repeating: "x", count: 3000)],
            token: token)
        #expect(grown.status == 507, "\(grown.text)")
        #expect(try stored("a")?["comment"] == nil)
        expectParam(
            try http.json("PATCH", "/v1/items/genericPassword?service=q&account=a", ["comment": megabyte], token: token),
            naming: "comment")
        expectParam(
            try http.json("PATCH", "/v1/items/identity?label=any", ["label": String(repeating: "x", count: 4097)], token: token),
            naming: "label")
        #expect(try stored("a")?["label"] as? String == String(repeating: "é", count: 2048))

        // A delete frees the room.
        #expect(try http.send("DELETE", "/v1/items/genericPassword?service=q&account=b", token: token).status == 200)
        #expect(try add("c", ["comment": String(repeating: "x", count: 4096)]).status == 201)
    }
}
