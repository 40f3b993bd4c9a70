import Foundation
import KeychainAPI
import KeychainConfig
import KeychaindTesting
import KeychainHTTP
import Testing

/// The audit lines the real app writes (its auditor, keyed by the vault's keyring).
struct AuditLineTests {
    /// An add's line names the item its typed answer names, whatever the body asked to be returned.
    @Test func anAddsAuditLineNamesTheItemItsAnswerNames() throws {
        // failClosed: every line is written on the request's thread, before its answer.
        let app = try TestApp { $0.auditFailClosed = true }
        defer { app.stop() }
        let path = app.configuration.auditFilePath
        let server = try TestServer(app)
        let bodies = [
            #"{"service":"a","value":"x"}"#, #"{"service":"b","value":"x","return":"none"}"#,
            #"{"service":"c","value":"x","return":"data"}"#, #"{"service":"d","label":5}"#,
        ]
        let answers = bodies.map { server.send(.post, "/v1/items/genericPassword", token: server.adminToken, body: $0) }
        #expect(answers.map(\.status) == [201, 201, 201, 400])
        let outcomes = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["route"] as? String == "/items/{class}" && $0["phase"] == nil }
        #expect(outcomes.count == 4)
        #expect(outcomes[0]["persistentRef"] as? String == answers[0].item?["persistentRef"]?.stringValue)
        #expect(outcomes[0]["persistentRef"] != nil)
        #expect(outcomes[1]["persistentRef"] == nil && outcomes[2]["persistentRef"] == nil, "the answer names no item")
        #expect(outcomes[3]["persistentRef"] == nil)
        #expect(
            (outcomes[3]["attributes"] as? [String: String]).map { Set($0.keys) } == ["service", "label"],
            "a refused body's attributes are recorded too")
    }
}
