import Foundation
import KeychaindTesting
import Testing

/// Issue 29, item 8: an answer is bounded in bytes as well as in items. A find over many large
/// secrets comes back over several pages, each body within `limits.maxAnswerBytes` (an item
/// larger than the bound alone on its page), and the pages together hold every item once.
@Suite(.serialized)
struct AnswerBoundTests {
    static let bound = 262_144

    @Test func largeSecretsComeBackOverPagesWithinTheBound() throws {
        let server = try TestApp(environment: ["KEYCHAIND_LIMITS_MAX_ANSWER_BYTES": "\(Self.bound)"])
        defer { server.stop() }
        let http = server.http
        let admin = server.adminToken
        let created = try http.json("POST", "/v1/admin/clients", ["name": "bulk", "accessGroups": ["bulk"]], token: admin)
        let token = try #require(created.json["token"] as? String)
        // 40 text secrets of 2-20 KB, and one whose answer alone is larger than the bound.
        var stored: [String: String] = [:]
        for index in 0..<41 {
            let size = index == 17 ? 150_000 : 2_000 + (index * 7_919) % 18_000
            let value = String(repeating: Character(UnicodeScalar(UInt8(65 + index % 26))), count: size)
            let added = try http.json(
                "POST", "/v1/items/genericPassword", ["service": "bulk", "account": "a\(index)", "value": value], token: token)
            #expect(added.status == 201, "\(added.text)")
            stored["a\(index)"] = value
        }

        var seen: [String: String] = [:]
        var pages = 0
        var cursor: String?
        repeat {
            var path = "/v1/items/genericPassword?service=bulk&limit=all&return=attributes,data"
            if let cursor { path += "&cursor=\(cursor)" }
            let page = try http.send("GET", path, token: token)
            #expect(page.status == 200, "\(page.text.prefix(300))")
            let items = page.json["items"] as? [[String: Any]] ?? []
            #expect(!items.isEmpty)
            #expect(page.body.count <= Self.bound || items.count == 1, "page \(pages): \(page.body.count) bytes, \(items.count) items")
            for item in items {
                let account = try #require(item["account"] as? String)
                #expect(seen[account] == nil, "\(account) came twice")
                seen[account] = item["value"] as? String
            }
            cursor = page.json["next"] as? String
            pages += 1
        } while cursor != nil && pages < 100
        #expect(seen == stored)
        #expect(pages > 5)

        // A numeric limit still counts items across pages cut by bytes.
        var counted = 0
        cursor = nil
        repeat {
            var path = "/v1/items/genericPassword?service=bulk&limit=25&return=data"
            if let cursor { path += "&cursor=\(cursor)" }
            let page = try http.send("GET", path, token: token)
            counted += (page.json["items"] as? [Any])?.count ?? 0
            #expect(page.body.count <= Self.bound || (page.json["items"] as? [Any])?.count == 1)
            cursor = page.json["next"] as? String
        } while cursor != nil
        #expect(counted == 25)
    }
}
