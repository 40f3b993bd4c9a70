import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests, on a free loopback port: made with `initdb` and
/// started with `pg_ctl` (through `runuser -u postgres` when the tests run as root, since the
/// server refuses root), trust authentication for the superuser `keychaind`. One cluster serves
/// the whole test process (`shared()`, about 0.7 s to start); `pg_ctl stop` ends it and its
/// directory is removed when the process exits.
///
/// Needs Debian's `postgresql` package (scripts/bootstrap --test installs it).
public final class ThrowawayPostgres: Sendable {
    public let port: Int
    public let user = "keychaind"
    private let directory: String
    private let binDirectory: String
    private let runsAsRoot: Bool

    private static let started = Mutex<Result<ThrowawayPostgres, ThrowawayPostgresError>?>(nil)

    /// The process's cluster, started by the first caller; stopped when the process exits.
    public static func shared() throws -> ThrowawayPostgres {
        try started.withLock { started in
            if let started { return try started.get() }
            let result = Result { () throws(ThrowawayPostgresError) in try ThrowawayPostgres() }
            started = result
            if case .success = result { atexit { ThrowawayPostgres.stopShared() } }
            return try result.get()
        }
    }

    private static func stopShared() {
        if case .success(let cluster) = started.withLock({ $0 }) { cluster.stop() }
    }

    /// A cluster of the caller's own, not shared: for tests that stop and start the server
    /// (`stopServer`, `startServer`). The caller ends it with `stop()`.
    public static func standalone() throws -> ThrowawayPostgres {
        try ThrowawayPostgres()
    }

    /// A libpq connection string to `database` over TCP on loopback.
    public func url(database: String = "postgres") -> String {
        "host=127.0.0.1 port=\(port) user=\(user) dbname=\(database) connect_timeout=5"
    }

    private init() throws(ThrowawayPostgresError) {
        binDirectory = try Self.binDirectory()
        runsAsRoot = getuid() == 0
        directory = NSTemporaryDirectory() + "keychaind-pg-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ThrowawayPostgresError("cannot create \(directory)")
        }
        let asRoot = runsAsRoot
        func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws(ThrowawayPostgresError) {
            try Self.run(program, arguments, asPostgres: asPostgres && asRoot)
        }
        if runsAsRoot { try run("/bin/chown", ["postgres:", directory], asPostgres: false) }
        try run(
            binDirectory + "/initdb",
            ["-D", directory + "/data", "-U", user, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
            asPostgres: runsAsRoot)
        // A port chosen free a moment ago can be taken by then: try a few.
        var lastError = ThrowawayPostgresError("no port")
        for _ in 0..<5 {
            let port = Self.freeLoopbackPort()
            do {
                try run(
                    binDirectory + "/pg_ctl",
                    [
                        "-D", directory + "/data", "-l", directory + "/log", "-w", "-o",
                        "-c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories=\(directory)", "start",
                    ],
                    asPostgres: runsAsRoot)
                self.port = port
                return
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastError
    }

    /// Stops the server (fast shutdown, waiting for it) and removes its directory.
    public func stop() {
        try? run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"], asPostgres: runsAsRoot)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `pg_ctl stop` with shutdown `mode` (`fast`: sessions ended, a clean shutdown;
    /// `immediate`: a crash, recovered from the WAL on the next start), waiting for it; the
    /// data stay for `startServer`.
    public func stopServer(mode: String = "fast") throws {
        try run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-m", mode, "-w", "stop"], asPostgres: runsAsRoot)
    }

    /// Starts the server again over the same data on the same port, waiting until it accepts connections.
    public func startServer() throws {
        try run(
            binDirectory + "/pg_ctl",
            [
                "-D", directory + "/data", "-l", directory + "/log", "-w", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories=\(directory)", "start",
            ],
            asPostgres: runsAsRoot)
    }

    /// The PIDs of the server's processes (the postmaster first, then its children), from
    /// `postmaster.pid` and /proc; empty when it is not running.
    public var serverPIDs: [Int32] {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let postmaster = Int32(first)
        else { return [] }
        let children = (try? String(contentsOfFile: "/proc/\(postmaster)/task/\(postmaster)/children", encoding: .utf8)) ?? ""
        return [postmaster] + children.split(separator: " ").compactMap { Int32($0) }
    }

    /// Makes an empty database `name`.
    public func createDatabase(_ name: String) throws {
        try run(binDirectory + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name], asPostgres: false)
    }

    /// Runs one of PostgreSQL's client programs (`pg_dump`, `pg_restore`, `psql`) against this
    /// server, `-h`, `-p` and `-U` given first; throws with its output when it fails.
    public func runClient(_ program: String, _ arguments: [String]) throws {
        try run(binDirectory + "/" + program, ["-h", "127.0.0.1", "-p", "\(port)", "-U", user] + arguments, asPostgres: false)
    }

    private func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws(ThrowawayPostgresError) {
        try Self.run(program, arguments, asPostgres: asPostgres)
    }

    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws(ThrowawayPostgresError) {
        try run(asPostgres ? "/usr/sbin/runuser" : program, asPostgres ? ["-u", "postgres", "--", program] + arguments : arguments)
    }

    /// Runs `program` to its end with its output in `output` (read back when it fails). Spawned and
    /// reaped directly: Foundation's `Process.waitUntilExit` hung in the test runner once the
    /// child was a zombie.
    private static func run(_ program: String, _ arguments: [String]) throws(ThrowawayPostgresError) {
        let output = NSTemporaryDirectory() + "keychaind-pg-run-" + UUID().uuidString
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw ThrowawayPostgresError("cannot run \(program): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS are macros Swift cannot import).
        guard status & 0xFFFF == 0 else {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw ThrowawayPostgresError("\(program) \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }

    /// Debian keeps the server programs out of PATH, in `pg_config --bindir`.
    private static func binDirectory() throws(ThrowawayPostgresError) -> String {
        for candidate in ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"]
        where FileManager.default.isExecutableFile(atPath: candidate + "/pg_ctl") {
            return candidate
        }
        throw ThrowawayPostgresError("PostgreSQL's server programs are not installed (scripts/bootstrap --test)")
    }

    private static func freeLoopbackPort() -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct ThrowawayPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
