import KeychainCore
import Synchronization
import Testing
@testable import KeychainClient

/// The header cache's window on a clock the test steps: kept while `Keychaind-Fresh-For` says,
/// from when it was asked, and not a moment longer.
struct AuthorizationHeaderCacheWindowTests {
    final class SteppedClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    let naming = TokenNaming(service: "api.example.com", user: nil, accessGroup: nil)

    @Test func aHeaderIsKeptForItsFreshSecondsFromWhenItWasAsked() {
        let clock = SteppedClock()
        let cache = AuthorizationHeaderCache(now: { clock.now })
        let asked = cache.now()
        clock.advance(.milliseconds(300))  // the trip
        cache.keep("Bearer a", for: naming, freshFor: "10", askedAt: asked)
        #expect(cache.header(for: naming) == "Bearer a")
        clock.advance(.milliseconds(9_600))
        #expect(cache.header(for: naming) == "Bearer a")
        clock.advance(.milliseconds(100))  // 10 s after asking, not after the answer came
        #expect(cache.header(for: naming) == nil)
    }

    @Test func noHeaderOrZeroOrGarbageKeepsNothingAndForgetDropsTheService() {
        let clock = SteppedClock()
        let cache = AuthorizationHeaderCache(now: { clock.now })
        for value in [nil, "0", "-3", "soon"] {
            cache.keep("Bearer a", for: naming, freshFor: value, askedAt: cache.now())
            #expect(cache.header(for: naming) == nil)
        }
        cache.keep("Bearer a", for: naming, freshFor: "60", askedAt: cache.now())
        let other = TokenNaming(service: "other.example.com", user: nil, accessGroup: nil)
        cache.keep("Bearer o", for: other, freshFor: "60", askedAt: cache.now())
        cache.forget(service: "api.example.com", user: nil)
        #expect(cache.header(for: naming) == nil)
        #expect(cache.header(for: other) == "Bearer o")
    }
}
