import Glibc

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
        guard let program = arguments.first else { return -1 }
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
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Nothing blocked: the calling thread's mask (a runtime may block signals on its
        // threads) is not the program's business.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid = pid_t()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, program, nil, &attributes, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
