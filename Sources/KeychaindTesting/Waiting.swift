public import Foundation

/// Polls `condition` until it holds or `timeout` seconds have passed, and answers whether it held.
///
/// Tests wait this way for something they can observe (a log line, a metric, a file, a socket the
/// server holds, what the app does off the request's thread) instead of sleeping for a guessed
/// time: the wait ends as soon as the condition holds, so the deadline can be generous; it only
/// comes into play when something is wrong.
@discardableResult
public func waitUntil(timeout: TimeInterval = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
}

/// `waitUntil` for a condition that must be awaited (a call through the async client library).
@discardableResult
public func waitUntil(timeout: TimeInterval = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
}
