import Foundation
import KeychainConcurrency
import Testing

struct PerThreadTests {
    final class Box: Sendable {
        let id = UUID()
    }

    /// `current` on `threads` plain threads at once, twice each: the ids each thread saw.
    static func idsSeen(by threads: Int, in perThread: PerThread<Box>) -> [(UUID, UUID)] {
        let seen = PThreadLocked<[(UUID, UUID)]>([])
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                let first = perThread.current.id
                let second = perThread.current.id
                seen.withLock { $0.append((first, second)) }
                done.leave()
            }.start()
        }
        done.wait()
        return seen.withLock { $0 }
    }

    @Test func eachThreadHasItsOwnInstanceAndKeepsIt() {
        let perThread = PerThread { Box() }
        let seen = Self.idsSeen(by: 4, in: perThread)
        #expect(seen.count == 4)
        #expect(seen.allSatisfy { $0.0 == $0.1 })
        #expect(Set(seen.map(\.0)).count == 4)
        // Instances outlive their threads, for readers that add them up.
        #expect(Set(perThread.instances.map(\.id)) == Set(seen.map(\.0)))
        #expect(perThread.current.id == perThread.current.id)
        #expect(perThread.instances.count == 5)
    }

    @Test func instancesOfTwoOwnersAreApart() {
        let one = PerThread { Box() }
        let other = PerThread { Box() }
        #expect(one.current.id != other.current.id)
        #expect(one.instances.count == 1 && other.instances.count == 1)
    }
}
