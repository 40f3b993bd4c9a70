// A backend service that calls an upstream API with a bearer token kept in keychaind.
//
//   KEYCHAIND_URL=http://127.0.0.1:8420 KEYCHAIND_TOKEN=kc_… \
//     swift run BackendServiceExample api.example.com [user]
//
// or, as a workload that logs in by itself with its platform's JWT (a Kubernetes service-account
// token, a CI OIDC token) under a login role an admin made (PUT /v1/admin/auth/jwt/roles/payments):
//
//   KEYCHAIND_URL=https://keychaind.internal:8420 KEYCHAIND_CA_FILE=/etc/keychaind/ca.pem \
//   KEYCHAIND_JWT_ROLE=payments KEYCHAIND_JWT_FILE=/var/run/secrets/tokens/keychaind \
//     swift run BackendServiceExample api.example.com [user]
//
// With the JWT variables the client reads the file at each login, renews its keychaind token
// ahead of expiry and logs in again at the role's cap or after a 401, so every call below
// presents a live token: nothing here handles keychaind tokens.
//
// It asks keychaind for the `Authorization` header of the service (`GET /v1/tokens/{service}/
// authorization`), and prints the request it would send upstream, the token masked.
import Foundation
import KeychainClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct BackendService {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard let service = arguments.first else {
            print("usage: BackendServiceExample <service> [user]")
            exit(2)
        }
        let user = arguments.dropFirst().first
        do {
            let keychain = try KeychainClient.fromEnvironment()
            guard let headers = try await keychain.getAuthorizationHeader(service: service, user: user) else {
                print("no access token stored for \(service); store one with PUT /v1/tokens/\(service)")
                exit(1)
            }
            var request = URLRequest(url: URL(string: "https://\(service)/v1/me")!)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let shown = headers["Authorization"].map { String($0.prefix(11)) + "…" } ?? ""
            print("GET \(request.url!.absoluteString)")
            print("Authorization: \(shown)")
            if let session = keychain.loginSession {
                // JWT credentials: how the login session stands (never the token).
                print(
                    "keychaind login: \(session.logins) login(s), \(session.renewals) renewal(s), "
                        + "accessor \(session.accessor ?? "-")")
            }
        } catch let error as KeychainError {
            // The server's error, as it sent it: status, name, message, detail.
            print("keychaind: \(error.name) (\(error.status)): \(error.message) \(error.detail ?? "")")
            exit(1)
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }
}
