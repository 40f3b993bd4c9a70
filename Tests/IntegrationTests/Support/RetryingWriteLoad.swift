import Foundation
import Testing

/// Writers that keep writing items of one service through a set of nodes while a fault happens,
/// as a backend service behind a load balancer would: a write whose node does not answer (the
/// connection refused or cut) or answers 503 is sent again, to the next node, until one answers
/// or its deadline passes. Every account belongs to one writer, so what each may hold afterwards
/// is known: its last acknowledged value, or the value of a write still unresolved.
final class RetryingWriteLoad: Sendable {
    /// What one account may hold after the fault. nil = absent.
    struct Expectation {
        var acknowledged: String?
        var pending: [String?] = []
        var allowed: [String?] { [acknowledged] + pending }
    }

    struct Counts {
        /// Writes answered 2xx.
        var acknowledged = 0
        /// Attempts that got no answer or 503 and were sent again.
        var retried = 0
        /// Adds whose retry found the item there (409): the cut-off attempt had committed.
        var committedUnanswered = 0
        /// Writes still unresolved when their deadline passed.
        var unresolved = 0
        /// The longest any one attempt took to be answered (or to fail), in seconds.
        var slowestAttempt = 0.0
    }

    let service: String
    private let token: String
    private let ports: Locked<[UInt16]>
    let model = Locked([String: Expectation]())
    let counts = Locked(Counts())
    /// Answers that no fault explains (a 4xx or 500 on a first attempt, a wrong 409, ...).
    let failures = Locked([String]())
    private let stopping = Locked(false)
    private let retryDeadline: Double

    /// `retryDeadline`: how long one write may keep being retried, in seconds.
    init(service: String, token: String, ports: [UInt16], retryDeadline: Double = 15) {
        self.service = service
        self.token = token
        self.ports = Locked(ports)
        self.retryDeadline = retryDeadline
    }

    /// A node's port changed (it was restarted).
    func setPort(_ index: Int, _ port: UInt16) { ports.withLock { $0[index] = port } }

    /// Starts `threads` writers; `stop()` ends them once their current write is resolved.
    func start(threads: Int) -> [WorkerThread] {
        (0..<threads).map { thread in WorkerThread(name: "writer-\(thread)") { self.write(thread: thread) } }
    }

    func stop(_ workers: [WorkerThread]) {
        stopping.withLock { $0 = true }
        workers.forEach { $0.join() }
    }

    private func write(thread: Int) {
        var mine: [String] = []
        var sequence = 0
        while !stopping.withLock({ $0 }) {
            sequence += 1
            let value = "w\(thread)-s\(sequence)-" + String(repeating: "x", count: Int.random(in: 1...200))
            let adds = mine.isEmpty || Int.random(in: 0..<10) < 7
            let account = adds ? "\(service)-t\(thread)-s\(sequence)" : mine.randomElement()!
            model.withLock { $0[account, default: Expectation()].pending.append(value) }
            if resolve(adds: adds, account: account, value: value, home: thread), adds { mine.append(account) }
        }
    }

    /// Sends one write until a node acknowledges it (true) or its deadline passes (false: it
    /// stays pending in the model).
    private func resolve(adds: Bool, account: String, value: String, home: Int) -> Bool {
        let start = ContinuousClock.now
        var attempt = 0
        while secondsSince(start) < retryDeadline {
            let nodes = ports.withLock { $0 }
            let http = HTTPTestClient(port: nodes[(home + attempt) % nodes.count])
            let attemptStart = ContinuousClock.now
            let answer = try? (adds
                ? http.json("POST", "/v1/items/genericPassword", ["service": service, "account": account, "value": value], token: token)
                : http.json("PATCH", "/v1/items/genericPassword?service=\(service)&account=\(account)", ["value": value], token: token))
            let took = secondsSince(attemptStart)
            counts.withLock { $0.slowestAttempt = max($0.slowestAttempt, took) }
            if let answer, (200..<300).contains(answer.status) {
                model.withLock { $0[account] = Expectation(acknowledged: value) }
                counts.withLock { $0.acknowledged += 1 }
                return true
            }
            if let answer, answer.status == 409, adds, attempt > 0 {
                // The attempt that was cut off had committed: the item holds this value.
                model.withLock { $0[account] = Expectation(acknowledged: value) }
                counts.withLock { $0.committedUnanswered += 1 }
                return true
            }
            if let answer, answer.status != 503 {
                failures.withLock { $0.append("\(adds ? "POST" : "PATCH") \(account) attempt \(attempt): \(answer.status) \(answer.text)") }
                return false
            }
            if let answer, answer.json["error"] as? String != "errSecIO" {
                failures.withLock { $0.append("503 that is not errSecIO: \(answer.text)") }
            }
            counts.withLock { $0.retried += 1 }
            attempt += 1
            usleep(20_000)
        }
        counts.withLock { $0.unresolved += 1 }
        return false
    }

    /// Compares what `http` lists for the service with the model: returns the accounts whose
    /// acknowledged value is gone (lost writes) and those holding a value no write explains, and
    /// the number of items stored.
    func verify(through http: HTTPTestClient) throws -> (lost: [String], unexplained: [String], stored: Int) {
        let stored = try http.values(service: service, token: token)
        let expected = model.withLock { $0 }
        var lost: [String] = []
        var unexplained: [String] = []
        for (account, expectation) in expected where !expectation.allowed.contains(stored[account]) {
            if expectation.acknowledged != nil {
                lost.append(account)  // absent, or an older value: an acknowledged write is gone
            } else {
                unexplained.append(account)
            }
        }
        for account in stored.keys where expected[account] == nil { unexplained.append(account) }
        return (lost, unexplained, stored.count)
    }
}
