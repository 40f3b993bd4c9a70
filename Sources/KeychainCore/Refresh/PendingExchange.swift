import Dispatch
public import Foundation
import Synchronization

/// How a token fetch that finds its tokens due for refresh may wait for the provider.
public enum ExchangeWait: Sendable {
    /// Block the calling thread until the exchange ends, at most the refresher's wait limit:
    /// the background refresher, and callers in process that own their thread.
    case block
    /// Never block: start the exchange if none is running and throw `ExchangeInProgress`, so
    /// that the caller waits without holding its thread (an HTTP worker: a provider that hangs
    /// must not take the threads every other request needs) and then asks again with `.stored`.
    case handOff
    /// Neither start nor wait for an exchange: answer from what is stored now (the caller has
    /// waited already).
    case stored
}

/// One token exchange in progress, as its waiters see it: each is told once, when the
/// exchange ends or when its own wait limit passes, whichever comes first. Waiting costs no
/// thread: the exchange's thread (or a timer) calls the waiters.
public final class PendingExchange: Sendable {
    private struct State {
        var finished = false
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Tells every waiter (on the calling thread) and later ones at once.
    public func finish() {
        let waiters = state.withLock { state -> [Waiter] in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.tell() }
    }

    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Calls `body` once: when the exchange ends, or after `seconds` if it has not by then
    /// (on a timer's thread), or now, on this thread, if it has ended already.
    public func whenFinished(orAfter seconds: TimeInterval, _ body: @escaping @Sendable () -> Void) {
        let waiter = Waiter(body)
        let finished = state.withLock { state -> Bool in
            if !state.finished { state.waiters.append(waiter) }
            return state.finished
        }
        if finished { return waiter.tell() }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { waiter.tell() }
    }

    /// Blocks the calling thread until the exchange ends, at most `seconds`; whether it ended.
    @discardableResult
    public func wait(upTo seconds: TimeInterval) -> Bool {
        let ended = DispatchSemaphore(value: 0)
        whenFinished(orAfter: seconds) { ended.signal() }
        ended.wait()
        return isFinished
    }

    /// A waiter's call, made once whichever of the exchange's end and its timer comes first.
    private final class Waiter: Sendable {
        private let body: Mutex<(@Sendable () -> Void)?>

        init(_ body: @escaping @Sendable () -> Void) { self.body = Mutex(body) }

        func tell() {
            let body = self.body.withLock { body in
                defer { body = nil }
                return body
            }
            body?()
        }
    }
}

/// Thrown by a fetch asked not to block (`ExchangeWait.handOff`) that must wait for a token
/// exchange: the caller waits for `exchange` (at most `waitLimit`) off its thread, then asks
/// again with `ExchangeWait.stored`.
public struct ExchangeInProgress: Error, Sendable {
    public let exchange: PendingExchange
    public let waitLimit: TimeInterval

    public init(exchange: PendingExchange, waitLimit: TimeInterval) {
        self.exchange = exchange
        self.waitLimit = waitLimit
    }
}
