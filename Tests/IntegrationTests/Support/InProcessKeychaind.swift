import Foundation
import KeychaindTesting
import Logging

/// A keychaind a suite talks to over loopback HTTP: the binary (`KeychaindProcess`), or the real
/// app served in this test process (`InProcessKeychaind`) for a suite that checks answers, not the
/// process (no log, no signals, no exit status).
protocol LoopbackKeychaind: AnyObject {
    var port: UInt16 { get }
    func adminToken() throws -> String
}

extension LoopbackKeychaind {
    func client() -> HTTPTestClient { HTTPTestClient(port: port) }
}

extension KeychaindProcess: LoopbackKeychaind {}

/// `TestApp(.live)`: `KeychaindApp` on libmicrohttpd at an ephemeral loopback port, in this
/// process, over a temporary data directory, configured from `environment` as the binary would be.
/// What the app logs (at info, as the tests run the binary) is kept in `log`.
final class InProcessKeychaind: LoopbackKeychaind {
    let app: TestApp
    private let capture = LogCapture()

    init(environment: [String: String] = [:]) throws {
        app = try TestApp(.live, environment: environment, logger: capture.logger(level: .info))
    }

    /// The app's log lines so far (`level message key=value ...`).
    var log: String { capture.text }

    var port: UInt16 { app.port ?? 0 }
    func adminToken() -> String { app.adminToken }
    var dataDir: URL { app.dataDirectory }
    func stop() { app.stop() }
}
