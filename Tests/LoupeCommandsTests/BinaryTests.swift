import Foundation
import GRDB
import LoupeStore
import LoupeTestSupport
import Testing

/// The built `loupe` binary as a user's shell runs it.
@Suite struct BinaryTests {
    @Test func helpListsEveryCommand() throws {
        let result = try TestEnvironment.run(["--help"])
        #expect(result.status == 0)
        for command in ["workspace", "theme", "notebook", "repl", "bench", "docs"] {
            #expect(result.output.contains(command))
        }
    }

    @Test func serveOnABusyPortNamesThePortAndCreatesNothing() throws {
        // Another program holds a loopback port (bound and listening, as a server would).
        let held = try LoopbackSocket(listening: true)
        let port = held.port
        let workspace = TestEnvironment.temporaryDirectory() + "/busy.sqlite"
        // Held open until the server has tried (ARC could close it after its last use).
        let result = try withExtendedLifetime(held) {
            try TestEnvironment.run(["serve", "--workspace", workspace, "--http-port", "\(port)", "--no-grpc"])
        }
        #expect(result.status == 1)
        #expect(result.error.contains("port \(port) on 127.0.0.1 is in use"), "\(result.error)")
        #expect(result.error.contains("--http-port"))
        #expect(!result.error.contains("errno"))
        #expect(!FileManager.default.fileExists(atPath: workspace))
    }

    @Test func typosExitWithUsageAndASuggestion() throws {
        let result = try TestEnvironment.run(["wrkspace", "info"])
        #expect(result.status == 64)
        #expect(result.error.contains("did you mean 'workspace'?"))
    }

    @Test func workspaceCommandsWorkOnAFile() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/cli.sqlite"
        #expect(
            try TestEnvironment.run(["workspace", "init", "--workspace", file]).output.contains("created workspace"))
        let check = try TestEnvironment.run(["--workspace", file, "workspace", "check"])
        #expect(check.status == 0)
        #expect(check.output.contains("integrity     ok"))
        let fromEnvironment = try TestEnvironment.run(["workspace", "info"], environment: ["LOUPE_WORKSPACE": file])
        #expect(fromEnvironment.output.contains("workspace  \(file)"))
    }

    @Test func aBusyWorkspaceGivesAClearErrorAfterTheTimeout() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/busy.sqlite"
        let holder = try Workspace(path: file)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? holder.write { db in
                try db.execute(sql: "INSERT INTO settings (key, value, updated_at) VALUES ('lock', 'x', '2026-01-01')")
                holding.signal()
                release.wait()
            }
        }
        thread.start()
        holding.wait()
        defer { release.signal() }
        let result = try TestEnvironment.run(
            ["theme", "light", "--workspace", file], environment: ["LOUPE_BUSY_TIMEOUT_MS": "300"])
        #expect(result.status == 1)
        #expect(result.error.contains("workspace is busy"))
    }

    @Test func notAWorkspaceIsRefusedWithoutTouchingTheFile() throws {
        let file = TestEnvironment.temporaryDirectory() + "/notes.txt"
        try "my notes".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try TestEnvironment.run(["workspace", "info", "--workspace", file])
        #expect(result.status == 1)
        #expect(result.error.contains("not a SQLite database"))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "my notes")
    }

    @Test func replRunsAScriptFromStandardInput() throws {
        let file = TestEnvironment.temporaryDirectory() + "/repl.sqlite"
        let ok = try TestEnvironment.run(
            ["repl", "--workspace", file], input: "workspace init\n# a comment\ntheme mono\ntheme\n")
        #expect(ok.status == 0)
        #expect(ok.output.contains("theme: mono"))
        #expect(ok.output.contains("mono  (current)"))
        let failing = try TestEnvironment.run(
            ["repl", "--workspace", file], input: "workspace inof\nworkspace check\n")
        #expect(failing.status == 1)
        #expect(failing.error.contains("did you mean 'workspace info'?"))
        #expect(failing.output.contains("integrity     ok"))
    }

    @Test func theTUIRefusesToStartWithoutATerminal() throws {
        let result = try TestEnvironment.run(["--workspace", TestEnvironment.temporaryDirectory() + "/t.sqlite"])
        #expect(result.status == 1)
        #expect(result.error.contains("needs a terminal"))
    }

    @Test func shellCompletionScriptsComeFromArgumentParser() throws {
        let result = try TestEnvironment.run(["--generate-completion-script", "bash"])
        #expect(result.status == 0)
        #expect(result.output.contains("workspace"))
    }
}
