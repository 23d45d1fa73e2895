import Foundation
import Glibc
import LoupeBase
import LoupeStore
import LoupeTestSupport
import Testing

/// The real binary in a real terminal (tmux), driven by keys the way a user drives it.
/// Skipped, with a message, where tmux is not installed; `.ci/run` installs it.
@Suite(.enabled(if: Tmux.isAvailable, "tmux is not installed (apt-get install -y tmux)"), .serialized)
struct TmuxEndToEndTests {
    @Test func aUserSessionFromStartToQuit() throws {
        let tmux = try Tmux.loupe(width: 100, height: 30)
        defer { tmux.kill() }
        try tmux.waitFor("1 Traces")
        #expect(try tmux.alternateScreen())

        tmux.keys("Tab")
        try tmux.waitFor("│  Retrieval")
        tmux.keys("4")
        try tmux.waitFor("│  Roofline")

        tmux.keys("?")
        try tmux.waitFor("Show this help")
        tmux.keys("Escape")
        try tmux.waitUntilGone("Show this help")

        // A typo names the closest command on the status line, without the shell's usage line (no
        // pane opens, so nothing needs closing).
        tmux.keys(":")
        tmux.type("wrkspace info")
        tmux.keys("Enter")
        try tmux.waitFor("unknown command 'wrkspace' (did you mean 'workspace'?)")
        #expect(try !tmux.screen().contains("Usage:"))
        try tmux.command("workspace info", shows: "schema     v\(Workspace.migrationIdentifiers.count)")

        // Narrower, the tab bar keeps the focused tab's name and the others' short names.
        tmux.resize(width: 80, height: 24)
        try tmux.waitUntil { screen in
            screen.split(separator: "\n").first.map { $0.contains("4 Roofline") && $0.contains("2 Retr 3 Attn") }
                ?? false
        }
        tmux.resize(width: 40, height: 10)
        try tmux.waitFor("Terminal too small")
        tmux.resize(width: 130, height: 30)
        try tmux.waitFor("9 Profiles")

        tmux.keys("q")
        try tmux.waitFor("[exited 0]")
        #expect(try !tmux.alternateScreen())
        #expect(try tmux.cursorVisible())
    }

    @Test func sigtermRestoresTheTerminalAndExits143() throws {
        let tmux = try Tmux.loupe(width: 80, height: 24)
        defer { tmux.kill() }
        try tmux.waitFor("1 Traces")
        try tmux.signalChild("TERM")
        try tmux.waitFor("[exited 143]")
        #expect(try !tmux.alternateScreen())
    }

    @Test func aCrashStillRestoresTheTerminal() throws {
        // SIGSEGV takes the same path as any crash (a Swift trap is SIGILL or SIGTRAP).
        let tmux = try Tmux.loupe(width: 80, height: 24)
        defer { tmux.kill() }
        try tmux.waitFor("1 Traces")
        try tmux.signalChild("SEGV")
        try tmux.waitFor("[exited 139]")
        #expect(try !tmux.alternateScreen())
        #expect(try tmux.cursorVisible())
    }

    @Test func aBrokenThemeFallsBackAndSaysWhere() throws {
        let themes = TestEnvironment.temporaryDirectory()
        try "name = \"broken\"\n[colors]\n\"txet\" = \"#ffffff\"\n".write(
            toFile: themes + "/broken.toml", atomically: true, encoding: .utf8)
        let tmux = try Tmux.loupe(width: 160, height: 30, prefix: "LOUPE_THEMES=\(themes)", arguments: "--theme broken")
        defer { tmux.kill() }
        try tmux.waitFor("1 Traces")
        try tmux.waitFor("broken.toml:3: unknown role 'txet'")
        tmux.keys("q")
        try tmux.waitFor("[exited 0]")
    }

    /// Typing searches the steps' names; enter searches their contents. A word only in the
    /// messages was "in 2 spans" in the header while the status line still said "No match".
    @Test func searchingAnOpenTraceSaysOneThing() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let messages: JSONValue = .object([
            "messages": .array([
                .object(["role": "user", "content": "find the CANARY please"]),
                .object(["role": "assistant", "content": "the CANARY is here"]),
            ])
        ])
        try (messages.compactJSON + "\n").write(toFile: directory + "/canary.jsonl", atomically: true, encoding: .utf8)
        let workspace = directory + "/w.sqlite"
        #expect(
            try TestEnvironment.run(["--workspace", workspace, "trace", "import", directory + "/canary.jsonl"]).status
                == 0)
        let tmux = try Tmux(width: 140, height: 30, command: "\(TestEnvironment.binary) --workspace \(workspace)")
        defer { tmux.kill() }
        try tmux.waitFor("find the CANARY please")
        tmux.keys("Enter")
        try tmux.waitFor("step 1/1")
        tmux.keys("/")
        tmux.type("CANARY")
        tmux.keys("Enter")
        try tmux.waitFor("“CANARY” in 2 spans")
        #expect(try !tmux.screen().contains("No match"))
        tmux.keys("q")
    }

    @Test func aLargeTerminalIsFilled() throws {
        let tmux = try Tmux.loupe(width: 300, height: 90)
        defer { tmux.kill() }
        try tmux.waitFor("1 Traces")
        let lines = try tmux.screen().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count >= 90)
        #expect(lines[0].hasSuffix("loupe"))
        #expect(lines.contains { $0.hasPrefix("╰") && $0.hasSuffix("╯") && $0.count == 300 })
        tmux.keys("q")
        try tmux.waitFor("[exited 0]")
    }

    @Test func anUnknownTerminalTypeGetsAClearMessage() throws {
        let tmux = try Tmux.loupe(width: 100, height: 10, prefix: "TERM=no-such-terminal")
        defer { tmux.kill() }
        try tmux.waitFor("[exited 1]")
        #expect(try tmux.screen().contains("unknown terminal type 'no-such-terminal'"))
    }

    /// The TUI on a PostgreSQL workspace: the traces another process imports and the labels
    /// another annotator gives appear without a key pressed (LISTEN/NOTIFY), the SAE panel reads the
    /// server (none trained there yet), the status bar says
    /// while the server is down and when it is back, and traces imported after that appear too.
    @Test func theTUIOnPostgreSQLSeesOtherProcessesWritesAndSaysWhenTheServerIsDown() throws {
        let cluster = try PostgresCluster.dedicated()
        defer { cluster.shutdown() }
        let url = cluster.url(try cluster.database("tui"), password: nil)
        let password = ["PGPASSWORD": PostgresCluster.password]
        let samples = WorkspaceCopyBinaryTests.samples
        func importing(_ sample: String) throws {
            let imported = try TestEnvironment.run(
                ["trace", "import", samples + "/" + sample, "--workspace", url], environment: password)
            #expect(imported.status == 0, "\(imported.error)")
        }
        try importing("openai-chat.jsonl")
        try importing("inspect-arith.eval")
        let rubric = WorkspaceCopyBinaryTests.samples + "/../../rubrics/answer-quality.yaml"
        let queued = try TestEnvironment.run(
            [
                "review", "queue", "create", "arith", "--rubric", rubric, "--from", "answers run:1", "--annotators",
                "ana,ben", "--overlap", "2", "--as", "ana", "--workspace", url,
            ], environment: password)
        #expect(queued.status == 0, "\(queued.error)")
        let tmux = try Tmux(
            width: 130, height: 30,
            command:
                "PGPASSWORD=\(PostgresCluster.password) LOUPE_USER=ben \(TestEnvironment.binary) --workspace \(url)")
        defer { tmux.kill() }
        try tmux.waitFor("compute the dynamic pressure")
        #expect(try tmux.screen().contains(url))

        try importing("openai-agents.json")
        try tmux.waitFor("Support desk")
        // Another annotator's label shows in the Review panel as it is given.
        tmux.keys("8")
        try tmux.waitFor("ana 0/6 · ben 0/6")
        let labelled = try TestEnvironment.run(
            [
                "review", "label", "arith", "--as", "ana", "--item", "run:1/q1/1", "correct=r", "grounded=g",
                "clarity=3", "--workspace", url,
            ], environment: password)
        #expect(labelled.status == 0, "\(labelled.error)")
        try tmux.waitFor("ana 1/6 · ben 0/6")
        // The Roofline panel reads the roofs and kernels imported there.
        let imported = try TestEnvironment.run(
            ["roofline", "import-ncu", samples + "/../ncu/h100-sgemm-raw.csv", "--workspace", url],
            environment: password)
        #expect(imported.status == 0, "\(imported.error)")
        tmux.keys("4")
        try tmux.waitFor("ampere_sgemm_128x64")
        tmux.keys("7")
        try tmux.waitFor("No SAE in this workspace yet")
        tmux.keys("1")

        try cluster.stopServer()
        try tmux.waitFor("· retrying")
        try cluster.start()
        try tmux.waitFor("connection to the workspace is back")
        try importing("swe-agent-v1.traj")
        try tmux.waitFor("swe-agent")
        #expect(try !tmux.screen().contains(PostgresCluster.password))

        tmux.keys("q")
        try tmux.waitFor("[exited 0]")
        #expect(try !tmux.alternateScreen())
    }

    @Test func aNonUTF8LocaleGetsAClearMessage() throws {
        let tmux = try Tmux.loupe(width: 120, height: 10, prefix: "LANG=C LC_ALL=C")
        defer { tmux.kill() }
        try tmux.waitFor("[exited 1]")
        #expect(try tmux.screen().contains("needs a UTF-8 locale"))
    }
}

/// A private tmux server running one command in one pane.
struct Tmux {
    /// The loupe binary on a fresh workspace, with `prefix` (environment assignments) and
    /// `arguments` added to its command line.
    static func loupe(width: Int, height: Int, prefix: String = "", arguments: String = "") throws -> Tmux {
        let workspace = TestEnvironment.temporaryDirectory() + "/e2e.sqlite"
        return try Tmux(
            width: width, height: height,
            command: "\(prefix) \(TestEnvironment.binary) --workspace \(workspace) \(arguments)")
    }

    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/tmux")
        } ?? false
    }

    let socket = "loupe-e2e-\(UUID().uuidString.prefix(8))"

    init(width: Int, height: Int, command: String) throws {
        let wrapped = "\(command); echo \"[exited $?]\"; sleep 60"
        // This call starts the server, which would inherit and hold open an output pipe.
        try run(
            [
                "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "\(width)", "-y", "\(height)",
                "-e", "LANG=C.UTF-8", "-e", "LC_ALL=C.UTF-8", "-e", "TERM=tmux-256color", wrapped,
            ], capture: false)
        try run(["set-option", "-g", "status", "off"])
    }

    /// Runs `tmux -L socket ARGUMENTS` with posix_spawn and waitpid. Foundation's Process is
    /// not used: the server that `new-session` daemonises confuses its exit tracking.
    @discardableResult
    private func run(_ arguments: [String], capture: Bool = true) throws -> String {
        try Tmux.spawn(["tmux", "-L", socket] + arguments, capture: capture)
    }

    static func spawn(_ arguments: [String], capture: Bool = true) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).out")
            .path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, capture ? outputPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // The test runner's threads may block signals, and a spawned process inherits the mask
        // (and tmux passes it on to the pane): start from a clean mask and default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Timeout(description: "cannot start \(arguments[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return capture ? ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "") : ""
    }

    func keys(_ names: String...) { for name in names { _ = try? run(["send-keys", "-t", "app", name]) } }
    func type(_ text: String) { _ = try? run(["send-keys", "-t", "app", "-l", text]) }
    func resize(width: Int, height: Int) {
        _ = try? run(["resize-window", "-t", "app", "-x", "\(width)", "-y", "\(height)"])
    }
    func screen() throws -> String { try run(["capture-pane", "-t", "app", "-p"]) }
    func alternateScreen() throws -> Bool {
        try run(["display-message", "-t", "app", "-p", "#{alternate_on}"]).hasPrefix("1")
    }
    func cursorVisible() throws -> Bool {
        try run(["display-message", "-t", "app", "-p", "#{cursor_flag}"]).hasPrefix("1")
    }

    /// Sends a signal to the program running in the pane (the pane's shell's child).
    func signalChild(_ signal: String) throws {
        let shell = try run(["display-message", "-t", "app", "-p", "#{pane_pid}"]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        _ = try Tmux.spawn(["pkill", "-\(signal)", "-P", shell, "loupe"], capture: false)
    }

    func waitUntil(timeout: Double = 30, _ condition: (String) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try screen()
            if condition(last) { return }
            usleep(50_000)
        }
        throw Timeout(description: "timed out; the screen was:\n\(last)")
    }

    func waitFor(_ text: String) throws { try waitUntil { $0.contains(text) } }

    /// Types `line` on the `:` line, waits for `text` in its output, then closes the output
    /// pane. Waiting for the pane to close matters: a key sent within the escape delay after
    /// Escape reads as alt+key, in any terminal program.
    func command(_ line: String, shows text: String) throws {
        keys(":")
        type(line)
        keys("Enter")
        try waitFor(text)
        keys("Escape")
        try waitUntilGone("Output: :" + line)
    }
    func waitUntilGone(_ text: String) throws { try waitUntil { !$0.contains(text) } }

    func kill() { _ = try? run(["kill-server"]) }
}
