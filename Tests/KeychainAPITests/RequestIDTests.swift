import Foundation
import Synchronization
import Testing
@testable import KeychainAPI

/// The Vault surface's request ids: a UUID's form, and no two alike, from one thread and from
/// several (each draws from a pool of its own, refilled as it empties).
struct RequestIDTests {
    @Test func requestIDsAreUUIDShapedAndNeverRepeat() {
        // More ids than one pool holds (4 KiB, 256 ids), on each of four threads.
        let collected = Mutex([String]())
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let ids = (0..<1000).map { _ in VaultEnvelope.randomRequestID() }
            collected.withLock { $0 += ids }
        }
        let all = collected.withLock { $0 }
        #expect(all.count == 4000)
        #expect(Set(all).count == 4000)
        let shape = #/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/#
        #expect(all.allSatisfy { $0.wholeMatch(of: shape) != nil })
    }
}
