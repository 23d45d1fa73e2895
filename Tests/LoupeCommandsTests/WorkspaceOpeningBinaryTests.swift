import Foundation
import GRDB
import LoupeStore
import LoupeTestSupport
import Testing

/// How the real binary opens a workspace when other processes, permissions or damage get in
/// the way.
@Suite struct WorkspaceOpeningBinaryTests {
    @Test func traceListIsNotRefusedWhileAnotherProcessWrites() throws {
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        _ = try Workspace(path: file)
        let lock = try WriteLockHolder(file: file)
        defer { lock.release() }
        let result = try TestEnvironment.run(
            ["trace", "list", "--workspace", file], environment: ["LOUPE_BUSY_TIMEOUT_MS": "200"])
        #expect(result.status == 0)
        #expect(result.error.isEmpty)
    }

    @Test func processesOpeningAnOlderWorkspaceAtOnceAllSucceed() throws {
        let directory = TestEnvironment.temporaryDirectory()
        for round in 0..<5 {
            let file = directory + "/old\(round).sqlite"
            try Workspace.createOlder(path: file, schemaVersion: 9)
            let lock = try WriteLockHolder(file: file)
            let threads = ThreadGroup(6) {
                (try? TestEnvironment.run(["trace", "list", "--workspace", file]))
                    ?? (status: -1, output: "", error: "did not run")
            }
            Thread.sleep(forTimeInterval: 0.3)
            lock.release()
            for result in threads.join() {
                #expect(result.status == 0, "\(result.error)")
            }
            #expect(try Workspace(path: file, access: .read).schemaVersion() == Workspace.migrationIdentifiers.count)
        }
    }

    @Test func checkDiagnosesAWorkspaceTooDamagedToOpen() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        do {
            let workspace = try Workspace(path: file)
            try workspace.write { db in
                for index in 0..<3000 {
                    try db.execute(
                        sql: "INSERT INTO command_history (line, source, ran_at) VALUES (?, 'tui', '2026-01-01')",
                        arguments: [String(repeating: "x", count: 300) + "\(index)"])
                }
            }
            try workspace.vacuum()
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        let truncated = directory + "/truncated.sqlite"
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
        let list = try TestEnvironment.run(["trace", "list", "--workspace", truncated])
        #expect(list.status == 1)
        #expect(list.error.contains("loupe workspace check"))
        let check = try TestEnvironment.run(["workspace", "check", "--workspace", truncated])
        #expect(check.status == 1)
        #expect(check.output.contains("cannot be read as a database"))
        #expect(check.output.contains(".recover"))
        #expect(!check.error.contains("is corrupt"))
    }

    /// Root ignores permissions, so this runs the binary as `nobody` where the test runs as root.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func aReadOnlyWorkspaceCanBeListedAndWritesSayWhyNot() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        _ = try Workspace(path: file)
        let old = directory + "/old.sqlite"
        try Workspace.createOlder(path: old, schemaVersion: 9)
        // The binary where `nobody` may run it, the workspace in a directory it may not write.
        let binary = directory + "/loupe"
        try FileManager.default.copyItem(atPath: TestEnvironment.binary, toPath: binary)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: old)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory) }
        func runAsNobody(_ arguments: [String]) throws -> (status: Int32, error: String) {
            try TestEnvironment.runAsNobody(arguments, binary: binary)
        }
        // Every listing opens the workspace read-only.
        for listing in [
            ["trace", "list"], ["eval", "list"], ["sae", "list"], ["models", "list"], ["prices", "list"],
        ] {
            let result = try runAsNobody(listing + ["--workspace", file])
            #expect(result.status == 0, "\(listing.joined(separator: " ")): \(result.error)")
        }
        #expect(try runAsNobody(["workspace", "check", "--workspace", file]).status == 0)
        let write = try runAsNobody(["theme", "light", "--workspace", file])
        #expect(write.status == 1)
        #expect(write.error.contains("cannot be written"))
        // An older schema cannot be read without bringing it forward, and it says so.
        let older = try runAsNobody(["trace", "list", "--workspace", old])
        #expect(older.status == 1)
        #expect(older.error.contains("schema of an older Loupe (v9"))
    }
}
