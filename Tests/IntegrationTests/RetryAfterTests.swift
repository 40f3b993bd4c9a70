import Foundation
import KeychainCore
@testable import KeychainRefresh
import Testing

/// `Retry-After` as keychaind reads it (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any
/// of its three forms, counted from the answer's arrival; nothing else holds a provider app.
struct RetryAfterTests {
    /// 1994-11-06 08:49:37 GMT, RFC 9110's example date.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        ("120", 120), (" 7 ", 7), ("99999999999999999999999", Int64.max),
        ("Sun, 06 Nov 1994 08:50:07 GMT", 30), ("Sunday, 06-Nov-94 08:50:07 GMT", 30), ("Sun Nov  6 08:50:07 1994", 30),
    ] as [(String, Int64)])
    func delaySecondsAndTheThreeDateForms(value: String, seconds: Int64) {
        #expect(RetryAfter.seconds(value, receivedAt: Self.example) == seconds)
    }

    @Test(arguments: ["", "0", "-5", "1.5", "soon", "Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:40:00 GMT",
                      "Sun, 06 Nov 1994 08:50:07 PST", "Sun, 32 Nov 1994 08:50:07 GMT"])
    func unparsableZeroAndPastValuesAreIgnored(value: String) {
        #expect(RetryAfter.seconds(value, receivedAt: Self.example) == nil)
    }

    @Test func aDatesFractionOfASecondRoundsUp() {
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:07 GMT", receivedAt: Self.example.addingTimeInterval(0.25)) == 30)
    }

    /// Only 429 and 503 with a usable value hold; the same header on another status is an
    /// ordinary failure.
    @Test func onlyA429Or503WithAUsableValueIsThrottled() {
        func failure(_ status: Int, _ retryAfter: String?) -> TokenExchangeFailure? {
            do {
                _ = try TokenEndpointAnswer(status: status, body: Array(#"{"error":"slow_down"}"#.utf8), retryAfter: retryAfter).grant()
                return nil
            } catch { return error }
        }
        #expect(failure(429, "60") == .throttled("the token endpoint answered HTTP 429 with Retry-After and error slow_down", retryAfter: 60))
        #expect(failure(503, "5") == .throttled("the token endpoint answered HTTP 503 with Retry-After and error slow_down", retryAfter: 5))
        #expect(failure(429, "later") == .refused(error: "slow_down", description: nil))
        #expect(failure(400, "60") == .refused(error: "slow_down", description: nil))
        #expect(failure(503, nil) == .unavailable("the token endpoint answered HTTP 503 with error slow_down"))
    }
}
