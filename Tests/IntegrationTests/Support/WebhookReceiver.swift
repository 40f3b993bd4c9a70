import Foundation
import KeychaindTesting
import Testing

/// `webhook_receiver.py`: a webhook receiver on loopback that verifies each delivery's signature
/// with the Standard Webhooks library (PyPI `standardwebhooks`, in the venv `scripts/bootstrap
/// --test` makes), started for one test and stopped by its PID.
final class WebhookReceiver {
    let process = Process()
    private(set) var port = 0

    /// The venv `scripts/bootstrap --test` installs standardwebhooks into.
    static var python: String {
        let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
        return "\(cache)/keychaind-test/webhook-receiver/bin/python3"
    }

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw ProcessFailure(description: "no \(Self.python): run scripts/bootstrap --test (it installs standardwebhooks)")
        }
        port = try LoopbackPythonServer.start(process, script: "webhook_receiver.py", arguments: [], python: Self.python)
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// SIGTERM, then SIGKILL if it is still running after 5 seconds.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !waitUntil(timeout: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// The secret deliveries are verified against, and how many of the next ones to answer 503.
    func control(secret: String? = nil, fail: Int = 0) throws {
        var body: [String: Any] = ["fail": fail]
        if let secret { body["secret"] = secret }
        _ = try call("POST", "/control", body)
    }

    struct Delivery {
        var id: String
        var timestamp: String
        var verified: Bool
        var error: String?
        var status: Int
        var contentType: String?
        var body: [String: Any]

        var type: String? { body["type"] as? String }
    }

    /// Every delivery received, in order.
    func received() throws -> [Delivery] {
        let answer = try call("GET", "/received", nil)
        return (answer["deliveries"] as? [[String: Any]] ?? []).map { delivery in
            Delivery(
                id: delivery["id"] as? String ?? "", timestamp: delivery["timestamp"] as? String ?? "",
                verified: delivery["verified"] as? Bool ?? false, error: delivery["error"] as? String,
                status: delivery["status"] as? Int ?? 0, contentType: delivery["contentType"] as? String,
                body: delivery["body"] as? [String: Any] ?? [:])
        }
    }

    /// Waits (bounded) until `condition` holds of what was received; the deliveries then.
    func wait(timeout: Double, until condition: ([Delivery]) -> Bool) throws -> [Delivery] {
        var deliveries = try received()
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(deliveries), Date() < deadline {
            usleep(100_000)
            deliveries = try received()
        }
        return deliveries
    }

    private func call(_ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        var arguments = ["curl", "-sS", "--max-time", "10", "-X", method]
        if let body {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            arguments += ["-H", "Content-Type: application/json", "--data", json]
        }
        arguments.append("http://127.0.0.1:\(port)\(path)")
        let result = try Command.run(arguments)
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { throw ProcessFailure(description: "webhook_receiver \(path): \(result.stderr) \(result.stdout)") }
        return object
    }
}
