public import KeychainCore
import Synchronization

/// The audit line of `keychaind admin-token`: `"phase":"command"`, `"method":"CLI"`, the command
/// as route, the recovery client it made and its token's accessor (never the token).
extension Auditor {
    public func recordRecoveryToken(client: String, token: TokenRecord) {
        var entry = Entry(id: sequence.add(1, ordering: .relaxed).newValue, method: "CLI", route: "keychaind admin-token", remote: nil)
        entry.client = client
        entry.token = token
        entry.status = 201
        entry.osStatus = 0
        _ = withLine(entry, phase: "command") { sink.write($0) }
    }
}
