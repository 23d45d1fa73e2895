import Glibc

/// Runs a program in the foreground on the process's own terminal (an editor) and waits for it.
package enum ExternalProcess {
    /// Spawns `arguments` (searched on `PATH`) with this process's standard streams and
    /// environment, and returns its exit status (128 + the signal when a signal ended it, as a
    /// shell reports it), or −1 when it could not be started.
    package static func run(_ arguments: [String]) -> Int32 {
        guard let program = arguments.first else { return -1 }
        var pid = pid_t()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, program, nil, nil, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
