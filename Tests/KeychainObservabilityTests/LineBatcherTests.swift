import Foundation
import Synchronization
import Testing

@testable import KeychainObservability

@Suite("LineBatcher")
struct LineBatcherTests {
    /// What the sink received, as lines.
    final class Collected: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let lines = Mutex<Int>(0)
        var text: [Substring] {
            let all = bytes.withLock { String(decoding: $0, as: UTF8.self) }
            return all.split(separator: "\n")
        }
    }

    @Test func everyLineArrivesOnceInItsThreadsOrder() {
        let collected = Collected()
        let batcher = LineBatcher(name: "test") { bytes, lines in
            collected.bytes.withLock { $0 += bytes }
            collected.lines.withLock { $0 += lines }
        }
        let threads = 4
        let perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for number in 0..<perThread { batcher.append(Array("\(thread) \(number)\n".utf8)) }
        }
        batcher.flush()
        let lines = collected.text
        #expect(lines.count == threads * perThread)
        #expect(collected.lines.withLock { $0 } == threads * perThread)
        for thread in 0..<threads {
            let numbers = lines.filter { $0.hasPrefix("\(thread) ") }.map { Int($0.split(separator: " ")[1])! }
            #expect(numbers == Array(0..<perThread))
        }
        batcher.close()
    }

    @Test func aFullBufferMakesWritersWaitInsteadOfDroppingLines() {
        let collected = Collected()
        let largestBatch = Mutex(0)
        // Room for about two lines: appends wait for the slow sink rather than lose lines.
        let batcher = LineBatcher(name: "test", linger: .zero, capacity: 16) { bytes, _ in
            usleep(200)  // the slow sink, the point: the buffer fills while it writes
            collected.bytes.withLock { $0 += bytes }
            largestBatch.withLock { $0 = max($0, bytes.count) }
        }
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            for number in 0..<100 { batcher.append(Array("\(thread):\(number)\n".utf8)) }
        }
        batcher.flush()
        #expect(collected.text.count == 300)
        // Bounded: a line is added only below the capacity, so no batch exceeds it by more than a line.
        #expect(largestBatch.withLock { $0 } <= 16 + "2:99\n".utf8.count)
        batcher.close()
    }

    /// The writer polls one linger after a batch, then waits to be woken: lines arriving in
    /// either state are written without a flush.
    @Test func linesAreWrittenWithoutAFlushWhetherTheWriterIsPollingOrIdle() {
        let collected = Collected()
        let batcher = LineBatcher(name: "test") { bytes, _ in collected.bytes.withLock { $0 += bytes } }
        /// Polls `condition` until it holds, for at most 20 s.
        func eventually(_ condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while !condition() {
                if ContinuousClock.now >= deadline { return false }
                usleep(1_000)
            }
            return true
        }
        batcher.append(Array("first\n".utf8))
        #expect(eventually { collected.text.count >= 1 })
        // Right after the first batch, within the writer's linger (10 ms) unless this thread is
        // held up that long; either way it must be written.
        batcher.append(Array("while polling\n".utf8))
        #expect(eventually { collected.text.count >= 2 })
        #expect(eventually { batcher.isWaitingForLines })
        batcher.append(Array("after idling\n".utf8))
        #expect(eventually { collected.text.count >= 3 })
        #expect(collected.text == ["first", "while polling", "after idling"])
        batcher.close()
    }

    @Test func afterCloseLinesAreWrittenOnTheCallingThread() {
        let collected = Collected()
        let batcher = LineBatcher(name: "test") { bytes, _ in collected.bytes.withLock { $0 += bytes } }
        batcher.append(Array("before\n".utf8))
        batcher.close()
        #expect(collected.text == ["before"])
        batcher.append(Array("after\n".utf8))
        #expect(collected.text == ["before", "after"])
        batcher.flush()
    }
}
