import Foundation
import KeychainCore
import Synchronization
import Testing

/// How the callers of a token exchange are told it ended: once each, at its end or at their own
/// wait limit, whichever comes first, without a thread waiting for them.
@Suite struct PendingExchangeTests {
    final class Calls: Sendable {
        private let count = Mutex(0)
        private let told = DispatchSemaphore(value: 0)

        func record() {
            count.withLock { $0 += 1 }
            told.signal()
        }

        var total: Int { count.withLock { $0 } }

        /// Whether a call came within `seconds`.
        func arrives(within seconds: Double) -> Bool { told.wait(timeout: .now() + seconds) == .success }
    }

    @Test func everyWaiterIsToldOnceWhenTheExchangeEnds() {
        let exchange = PendingExchange()
        let calls = Calls()
        for _ in 0..<3 { exchange.whenFinished(orAfter: 0.2) { calls.record() } }
        #expect(calls.total == 0)
        exchange.finish()
        #expect(calls.total == 3)
        Thread.sleep(forTimeInterval: 0.4)  // the timers pass: nobody is told twice
        #expect(calls.total == 3)
    }

    @Test func aWaiterIsToldAtItsLimitWhenTheExchangeHasNotEnded() {
        let exchange = PendingExchange()
        let calls = Calls()
        exchange.whenFinished(orAfter: 0.1) { calls.record() }
        #expect(calls.arrives(within: 5))
        #expect(!exchange.isFinished)
        exchange.finish()
        #expect(calls.total == 1)
    }

    @Test func aWaiterAfterTheEndIsToldAtOnceOnItsOwnThread() {
        let exchange = PendingExchange()
        exchange.finish()
        let calls = Calls()
        exchange.whenFinished(orAfter: 60) { calls.record() }
        #expect(calls.total == 1)
    }

    @Test func aBlockingWaitReturnsAtTheEndOrAtItsLimit() {
        let unfinished = PendingExchange()
        let started = Date()
        #expect(!unfinished.wait(upTo: 0.1))
        #expect(Date().timeIntervalSince(started) >= 0.1)

        let finishing = PendingExchange()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { finishing.finish() }
        #expect(finishing.wait(upTo: 30))
    }
}
