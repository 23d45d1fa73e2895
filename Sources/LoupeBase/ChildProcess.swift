import Glibc

/// A program run as a child of this process and waited for: `posix_spawnp` and `wait4`, so the
/// wait returns as the child is reaped (Foundation's `Process` polls every 50 ms on Linux) and
/// reports the child's own peak RSS.
package enum ChildProcess {
    /// How a child ended: its exit status (128 + the signal when a signal ended it, as a shell
    /// reports it) and its peak resident set in bytes.
    package struct Exit: Sendable {
        package var status: Int32
        package var peakResidentBytes: Double
    }

    /// Spawns `arguments` (searched on `PATH`) with this process's environment and standard
    /// streams (standard output to /dev/null when `silenceOutput`), and waits for it. The child
    /// gets SIGINT and SIGQUIT with their default actions and no signal blocked, whatever this
    /// process does with them. Nil when it could not be started or waited for.
    package static func run(_ arguments: [String], silenceOutput: Bool = false) -> Exit? {
        guard let program = arguments.first else { return nil }
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if silenceOutput { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        var pid = pid_t()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, program, &actions, &attributes, &argv, environ) == 0 else { return nil }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { return nil }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Exit(status: code, peakResidentBytes: Double(usage.ru_maxrss) * 1024)
    }
}
