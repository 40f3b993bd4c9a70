import Foundation
import Testing

/// Issue 9, concurrency: many clients on the same keys at once end with exactly the outcomes the
/// semantics allow, and no update is lost. The app in process on loopback (`InProcessKeychaind`).
@Suite(.serialized)
final class ConcurrencyTests {
    @Test func racingAddsOneWinsOthersAreDuplicatesAndNoUpdateIsLost() throws {
        let server = try InProcessKeychaind()
        defer { server.stop() }
        let token = try server.newClientToken("race", groups: ["race"])
        let port = server.port
        let threads = 16
        let keys = Hardening.count(ci: 20, full: 200)

        // 1. Racing adds of the same key: one 201, the rest errSecDuplicateItem, and the stored
        //    value is the winner's.
        var mismatches = 0
        for key in 0..<keys {
            let outcomes = Locked([(thread: Int, status: Int, osStatus: Int?)]())
            Hardening.concurrently(threads) { thread in
                let answer = try? HTTPTestClient(port: port).json(
                    "POST", "/v1/items/genericPassword", ["service": "race", "account": "k\(key)", "value": "by-\(thread)"], token: token)
                outcomes.withLock { $0.append((thread, answer?.status ?? -1, answer?.json["status"] as? Int)) }
            }
            let all = outcomes.withLock { $0 }
            let winners = all.filter { $0.status == 201 }
            #expect(winners.count == 1, "key \(key): \(all.map(\.status))")
            #expect(all.filter { $0.status == 409 && $0.osStatus == -25299 }.count == threads - 1, "key \(key): \(all.map(\.status))")
            let stored = try HTTPTestClient(port: port).send("GET", "/v1/items/genericPassword?service=race&account=k\(key)&return=data", token: token)
            if (stored.json["item"] as? [String: Any])?["value"] as? String != winners.first.map({ "by-\($0.thread)" }) { mismatches += 1 }
        }
        #expect(mismatches == 0)

        // 2. Lost updates: threads each PATCH their own attribute of one item, many times; at the
        //    end every attribute holds its thread's last acknowledged value.
        let attributes = ["label", "description", "comment", "creator", "type", "generic"]
        #expect(try HTTPTestClient(port: port).json("POST", "/v1/items/genericPassword", ["service": "race", "account": "shared", "value": "v0"], token: token).status == 201)
        let rounds = Hardening.count(ci: 30, full: 300)
        let last = Locked([String: Any]())
        let failures = Locked(0)
        Hardening.concurrently(attributes.count + 1) { index in
            let http = HTTPTestClient(port: port)
            for round in 0..<rounds {
                let name = index < attributes.count ? attributes[index] : "value"
                let value: Any = switch name {
                case "creator", "type": index * 1000 + round
                case "generic": Data("g\(round)".utf8).base64EncodedString()
                default: "\(name)-\(round)"
                }
                let answer = try? http.json("PATCH", "/v1/items/genericPassword?service=race&account=shared", [name: value], token: token)
                if answer?.status == 200, answer?.json["updated"] as? Int == 1 {
                    last.withLock { $0[name] = value }
                } else {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let final = try HTTPTestClient(port: port).send("GET", "/v1/items/genericPassword?service=race&account=shared&return=attributes,data", token: token)
        let item = final.json["item"] as? [String: Any] ?? [:]
        for (name, value) in last.withLock({ $0 }) {
            #expect("\(item[name] ?? "absent")" == "\(value)", "\(name): stored \(item[name] ?? "absent"), last acknowledged \(value)")
        }

        // 3. Adds and deletes of one key racing: successful adds minus successful deletes is
        //    whether the item is there at the end (0 or 1), and every answer is one the
        //    semantics allow.
        let counts = Locked((adds: 0, deletes: 0, other: [Int]()))
        Hardening.concurrently(threads) { thread in
            let http = HTTPTestClient(port: port)
            for _ in 0..<Hardening.count(ci: 20, full: 200) {
                if Bool.random() {
                    let status = (try? http.json("POST", "/v1/items/genericPassword", ["service": "race", "account": "flip", "value": "t\(thread)"], token: token))?.status ?? -1
                    counts.withLock { if status == 201 { $0.adds += 1 } else if status != 409 { $0.other.append(status) } }
                } else {
                    let answer = try? http.send("DELETE", "/v1/items/genericPassword?service=race&account=flip", token: token)
                    counts.withLock {
                        if answer?.status == 200 { $0.deletes += answer?.json["deleted"] as? Int ?? 99 } else if answer?.status != 404 { $0.other.append(answer?.status ?? -1) }
                    }
                }
            }
        }
        let (adds, deletes, other) = counts.withLock { ($0.adds, $0.deletes, $0.other) }
        let present = try HTTPTestClient(port: port).send("GET", "/v1/items/genericPassword?service=race&account=flip", token: token).status == 200 ? 1 : 0
        #expect(other.isEmpty, "unexpected answers \(other)")
        #expect(adds - deletes == present, "\(adds) adds, \(deletes) deletes, present \(present)")
        Hardening.report("concurrency: \(keys) keys x \(threads) racing adds: one winner each, \(threads - 1) errSecDuplicateItem; \(attributes.count + 1) threads x \(rounds) PATCHes of distinct attributes: none lost; add/delete race: \(adds) adds - \(deletes) deletes = \(present) present")
    }
}
