import Foundation
import KeychainCore
import Testing
@testable import KeychainClient

/// Issue 40: a plain `http://` base URL is refused unless it names this machine (a literal
/// loopback address or `localhost`); `https` is taken anywhere.
struct PlaintextURLTests {
    @Test(arguments: [
        "http://keychain.example.com:8420", "http://10.0.0.5:8420", "http://192.168.1.2", "http://[2001:db8::1]:8420",
        "http://[::ffff:10.0.0.1]", "http://localhost.example.com", "http://127.0.0.1.example.com", "HTTP://example.com",
    ])
    func plainHTTPToAnotherHostIsRefused(url: String) throws {
        #expect {
            _ = try KeychainClient(baseURL: URL(string: url)!, token: "kc_test")
        } throws: { error in
            let error = error as? KeychainError
            return error?.code == .param && error?.detail?.contains("use https://") == true
        }
        #expect(throws: KeychainError.self) {
            _ = try KeychainClient.fromEnvironment(["KEYCHAIND_URL": url, "KEYCHAIND_TOKEN": "kc_test"])
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:8420", "http://127.10.0.3", "http://localhost:8420", "http://LOCALHOST", "http://[::1]:8420",
        "http://[::ffff:127.0.0.1]:8420", "https://keychain.example.com", "https://10.0.0.5:8420",
    ])
    func loopbackOrHTTPSIsAccepted(url: String) throws {
        _ = try KeychainClient(baseURL: URL(string: url)!, token: "kc_test")
    }
}
