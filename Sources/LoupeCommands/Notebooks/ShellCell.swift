import Foundation
import Glibc
import LoupeKit

/// Runs a notebook's ```` ```sh run ```` cell: `bash -e -o pipefail` on the script, in the
/// directory `notebook run` was started in, with the notebook's workspace as
/// `LOUPE_WORKSPACE`, its scratch directory as `SCRATCH`, and this `loupe` first on `PATH`, so a
/// script's `loupe …` lines run the same build on the same workspace as the notebook's cells.
///
/// Standard output and error go to one file, not a pipe: a script may leave a server behind (a
/// tmux server, a database, `worker &`) that holds its descriptors open, and reading a pipe to
/// its end would wait for them. The script gets a process group of its own; past `timeout` the
/// group is ended (SIGTERM, then SIGKILL) and the cell fails, saying so.
struct ShellCell {
    var workspace: String
    var scratch: String
    var timeout: Duration

    func run(_ script: String) -> CommandOutcome {
        let outputPath = scratch + "/.sh-cell-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process's: a descriptor it inherited without close-on-exec (the
        // pipe a caller reads this process's output from) would be held open by what the script
        // leaves running, and that caller would wait for it.
        // (glibc skips a descriptor closed meanwhile: only one out of range is an error.)
        for descriptor in Self.openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own, so a timeout ends what the script started too; nothing blocked
        // (a runtime may block signals on its threads, and a child inherits the mask).
        posix_spawnattr_setpgroup(&attributes, 0)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))
        let arguments = ["/bin/bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment().map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            return CommandOutcome(error: "cannot start /bin/bash: \(String(cString: strerror(spawned)))")
        }
        let status = wait(for: pid)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let shown = output.replacingOccurrences(of: scratch, with: "$SCRATCH")
        switch status {
        case .exited(0): return CommandOutcome(output: shown)
        case .exited(let code): return CommandOutcome(output: shown, error: "the script exited with status \(code)")
        case .signalled(let signal):
            return CommandOutcome(output: shown, error: "the script was ended by signal \(signal)")
        case .timedOut:
            return CommandOutcome(
                output: shown, error: "the script ran past \(timeout.components.seconds) s and was stopped")
        }
    }

    /// This process's open file descriptors, from /proc/self/fd.
    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    private enum Status {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
    }

    private func wait(for pid: pid_t) -> Status {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid {
                // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as functions.
                return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
            }
            if waited < 0, errno != EINTR { return .exited(-1) }
            if ContinuousClock.now >= deadline {
                kill(-pid, SIGTERM)
                let grace = ContinuousClock.now + .seconds(2)
                while waitpid(pid, &status, WNOHANG) == 0, ContinuousClock.now < grace { usleep(20_000) }
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return .timedOut
            }
            usleep(10_000)
        }
    }

    private func environment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LOUPE_WORKSPACE"] = workspace
        environment["SCRATCH"] = scratch
        if let binary = CheckoutDirectory.executablePath, binary.hasPrefix("/") {
            let directory = URL(fileURLWithPath: binary).deletingLastPathComponent().path
            environment["PATH"] = directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        }
        return environment
    }
}
