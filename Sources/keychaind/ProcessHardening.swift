import CProcessHardening
import Logging

/// What `serve` does to its own process before it reads a key.
enum ProcessHardening {
    /// Clears the "dumpable" attribute (`prctl(PR_SET_DUMPABLE, 0)`): a crash writes no core file
    /// with keys and secrets in it, and the files in `/proc/<pid>` belong to root, so another
    /// process of the same user can neither attach a debugger nor read the server's memory.
    /// Root still can.
    static func forbidCoreDumps(logger: Logger) {
        if CProcessHardening_set_dumpable(0) != 0 {
            logger.warning("could not mark the process as not dumpable: a core file could hold keys")
        }
    }
}
