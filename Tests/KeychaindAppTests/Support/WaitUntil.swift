import Foundation

/// Polls `condition` until it holds or `timeout` seconds have passed, and answers whether it held
/// (for what the app does off the request's thread: background re-encryption, the audit batcher).
@discardableResult
func waitUntil(timeout: TimeInterval = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
}
