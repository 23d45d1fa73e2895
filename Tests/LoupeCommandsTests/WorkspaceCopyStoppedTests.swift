import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// A `workspace copy` stopped part-way (its PostgreSQL destination killed during the spans) leaves
/// a mark that `workspace check` finds, with the traces still missing spans and the command that
/// finishes the copy; running it again finishes it and the check passes.
@Suite(.serialized) struct WorkspaceCopyStoppedTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../sample-data/traces").standardized.path

    @Test func aCopyStoppedPartWayIsFoundByCheckAndFinishedByRunningItAgain() throws {
        let cluster = try PostgresCluster.dedicated()
        defer { cluster.shutdown() }
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        for sample in ["swe-agent-v1.traj", "inspect-arith.eval", "openai-chat.jsonl", "openai-agents.json"] {
            let imported = try TestEnvironment.run([
                "trace", "import", Self.samples + "/" + sample, "--workspace", file,
            ])
            #expect(imported.status == 0, "\(imported.error)")
        }
        let url = cluster.url(try cluster.database("stopped"))
        let postgresURL = try PostgresURL(url, environment: [:])
        let source = try Workspace(path: file)
        let store = try PostgresStore.open(postgresURL)
        // The server stops after the first batch of spans is in: the traces are all there, most
        // of their spans not.
        var stopped = false
        #expect(throws: WorkspaceError.self) {
            try WorkspaceCopy.copy(from: .sqlite(source), to: .postgres(store)) { table, _ in
                guard table == "spans", !stopped else { return }
                stopped = true
                try? cluster.stopImmediately()
            }
        }
        #expect(stopped, "the copy never reached the spans")
        store.close()
        try cluster.start()

        let check = try TestEnvironment.run(["workspace", "check", "--workspace", url])
        #expect(check.status != 0)
        #expect(check.output.contains("copy          unfinished"), "\(check.output)")
        #expect(check.output.contains("without all their spans"), "\(check.output)")
        #expect(check.error.contains("unfinished workspace copy"), "\(check.error)")
        #expect(check.error.contains("loupe workspace copy \(file) \(postgresURL.description)"), "\(check.error)")
        #expect(!check.output.contains(PostgresCluster.password) && !check.error.contains(PostgresCluster.password))

        let again = try TestEnvironment.run(["workspace", "copy", file, url])
        #expect(again.status == 0, "\(again.error)")
        let whole = try TestEnvironment.run(["workspace", "check", "--workspace", url])
        #expect(whole.status == 0, "\(whole.error)")
        #expect(
            whole.output.contains("copy          ok") && whole.output.contains("traces        ok"), "\(whole.output)")

        // Back into a file: the copy ends with no mark left, and the file checks whole.
        let back = directory + "/back.sqlite"
        let copied = try TestEnvironment.run(["workspace", "copy", url, back])
        #expect(copied.status == 0, "\(copied.error)")
        let checked = try TestEnvironment.run(["workspace", "check", "--workspace", back])
        #expect(checked.status == 0, "\(checked.error)")
        #expect(
            checked.output.contains("integrity     ok") && checked.output.contains("copy          ok")
                && checked.output.contains("traces        ok"), "\(checked.output)")
        #expect(try SettingsTables(try Workspace(path: back)).setting(WorkspaceCopy.inProgressKey) == nil)
    }
}
