import Foundation
import KeychaindTesting
import Testing

/// The provider under pressure (`POST /pressure` of oauth_server.py) and what the rotation tests
/// need: another party rotating a refresh token at the provider, and the calls in flight.
extension OAuthServer {
    /// The next `times` calls to /token answer `status` with `Retry-After: retryAfter` (none when nil).
    func pressure(status: Int, retryAfter: String?, times: Int = 1) throws {
        _ = try call("POST", "/pressure", ["status": status, "retryAfter": retryAfter ?? NSNull(), "times": times])
    }

    /// /token calls being answered now.
    func inFlight() throws -> Int {
        try call("GET", "/stats", nil)["inFlight"] as? Int ?? -1
    }

    /// What another party (a backend service, another deployment) does with a refresh token: trades
    /// it at /token for new tokens, which revokes it (the server rotates refresh tokens).
    func rotate(_ refreshToken: String, client: (id: String, secret: String) = OAuthServer.basicClient) throws
        -> (accessToken: String, refreshToken: String)
    {
        let result = try Command.run([
            "curl", "-sS", "--max-time", "10", "-u", "\(client.id):\(client.secret)",
            "--data-urlencode", "grant_type=refresh_token", "--data-urlencode", "refresh_token=\(refreshToken)",
            tokenEndpoint,
        ])
        guard let answer = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let access = answer["access_token"] as? String, let refresh = answer["refresh_token"] as? String
        else { throw ProcessFailure(description: "oauth_server /token: \(result.stderr) \(result.stdout)") }
        return (access, refresh)
    }
}
