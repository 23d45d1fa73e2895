import Glibc
import LoupeBase

/// Runs a program in the foreground on the process's own terminal (an editor) and waits for it.
package enum ExternalProcess {
    /// Spawns `arguments` (searched on `PATH`) with this process's standard streams and
    /// environment, and returns its exit status (128 + the signal when a signal ended it, as a
    /// shell reports it), or −1 when it could not be started.
    ///
    /// As `system(3)` and git do while an editor runs, this process ignores SIGINT and SIGQUIT
    /// until the program exits (ctrl+c in the editor's terminal is the editor's, not a request to
    /// quit Loupe), and the program gets them with their default actions.
    package static func run(_ arguments: [String]) -> Int32 {
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigemptyset(&ignore.sa_mask)
        var previousInterrupt = sigaction()
        var previousQuit = sigaction()
        sigaction(SIGINT, &ignore, &previousInterrupt)
        sigaction(SIGQUIT, &ignore, &previousQuit)
        defer {
            sigaction(SIGINT, &previousInterrupt, nil)
            sigaction(SIGQUIT, &previousQuit, nil)
        }
        return ChildProcess.run(arguments)?.status ?? -1
    }
}
