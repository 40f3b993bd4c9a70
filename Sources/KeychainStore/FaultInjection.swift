#if KEYCHAIND_FAULT_INJECTION
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash points for tests of crash safety, compiled into debug builds only (Package.swift sets
/// `KEYCHAIND_FAULT_INJECTION` for the debug configuration, which `swift build --build-tests`
/// and the tests use; the release builds of the image, `scripts/run` and the benches have none).
/// A debug server honours `KEYCHAIND_FAULT=<point>` when that variable is set: reaching the named
/// point ends the process at once with `_exit(70)` (no cleanup, no flush: like a power cut as
/// far as the process is concerned). Unit tests inject a throwing action instead. Armed through
/// `DataDirectory.faults`.
public struct FaultInjection: Sendable {
    /// The points, in the order `Vault.rekey()` passes them.
    public enum Point: String, Sendable, CaseIterable {
        /// `master.key.new` is written and durable; the database is still under the old key.
        case rekeyAfterNewKeyFile = "rekey-after-new-key-file"
        /// The keyring is re-wrapped under the new key (committed); `master.key` is still the old key.
        case rekeyAfterRewrap = "rekey-after-rewrap"
        /// `master.key.new` was renamed over `master.key` (directory fsynced).
        case rekeyAfterRename = "rekey-after-rename"
    }

    /// The environment variable that names a point.
    public static let environmentVariable = "KEYCHAIND_FAULT"

    let point: Point?
    let action: @Sendable (Point) throws -> Void

    init(point: Point?, action: @escaping @Sendable (Point) throws -> Void) {
        self.point = point
        self.action = action
    }

    /// No fault anywhere.
    public static let none = FaultInjection(point: nil) { _ in }

    /// The point named by `KEYCHAIND_FAULT` in `environment` (unknown names are ignored);
    /// reaching it calls `_exit(70)`.
    public static func fromEnvironment(_ environment: [String: String]) -> FaultInjection {
        guard let name = environment[environmentVariable], let point = Point(rawValue: name) else { return .none }
        return FaultInjection(point: point) { _ in _exit(70) }
    }

    /// The armed point's name, nil when none is (the server logs a warning at start).
    public var armedPoint: String? { point?.rawValue }

    func reach(_ point: Point) throws {
        if point == self.point { try action(point) }
    }
}
#endif
