/// How long a failing refresh waits before the next try: exponential from `base`, capped at
/// `maximum`, each delay drawn at random from its upper half so that many services failing
/// together do not retry together.
public struct RefreshBackoff: Sendable {
    public var base: Double
    public var maximum: Double

    public init(base: Double = 1, maximum: Double = 300) {
        self.base = base
        self.maximum = maximum
    }

    /// Seconds to wait after `failures` failures in a row (1 or more).
    public func delay(afterFailures failures: Int) -> Double {
        let full = min(maximum, base * Double(1 << min(max(failures - 1, 0), 20)))
        return Double.random(in: (full / 2)...full)
    }
}
