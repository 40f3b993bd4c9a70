import Foundation

/// A thread a test starts and joins: `join()` returns once `body` has returned, so no worker
/// outlives the test that started it (a `defer { ...; worker.join() }` covers the throwing paths).
final class WorkerThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let finished = finished
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Returns once `body` has returned; may be called again (a `defer` after an explicit join).
    func join() {
        finished.wait()
        finished.signal()
    }
}
