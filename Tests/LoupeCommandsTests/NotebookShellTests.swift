import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `notebook run` on ```` ```sh run ```` cells with the real bash: the script reads the
/// notebook's workspace with this very loupe, a process it leaves behind does not hold the run,
/// and a script past its time is stopped together with what it started.
@Suite struct NotebookShellTests {
    /// The processes whose command line holds `marker` (read from /proc: procps may be absent).
    private func processes(_ marker: String) -> [Int32] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return ids.filter { id in
            guard let line = FileManager.default.contents(atPath: "/proc/\(id)/cmdline") else { return false }
            return String(decoding: line, as: UTF8.self).contains(marker)
        }
    }

    private func running(_ marker: String) -> Bool { !processes(marker).isEmpty }

    private func stop(_ marker: String) {
        for id in processes(marker) { kill(id, SIGKILL) }
    }

    @Test func aScriptReadsTheNotebooksWorkspaceWithThisLoupeAndMayLeaveAServerBehind() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let marker = "loupe-sh-cell-\(UUID().uuidString.prefix(8))"
        let sample = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/openai-agents.json").path
        let path = directory + "/shell.md"
        try """
        ```loupe
        trace import \(sample)
        ```

        ```sh run
        loupe trace list | tail -n +2 | wc -l
        [ "$(command -v loupe)" -ef "\(TestEnvironment.binary)" ] && echo "this loupe"
        echo "$LOUPE_WORKSPACE"
        # A server left running, its output in the cell's file.
        bash -c "exec -a \(marker) sleep 120" &
        echo left running
        ```

        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { stop(marker) }

        let ran = try TestEnvironment.run(["notebook", "run", path])
        #expect(ran.status == 0, "\(ran.output)\(ran.error)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("```output\n2\nthis loupe\n$SCRATCH/scratch.sqlite\nleft running\n```"), "\(written)")
        // The run returned while the server it left still ran.
        #expect(running(marker))
    }

    @Test func aScriptPastItsTimeIsStoppedWithWhatItStarted() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let marker = "loupe-sh-cell-\(UUID().uuidString.prefix(8))"
        let path = directory + "/slow.md"
        try """
        ```sh run
        echo starting
        bash -c "exec -a \(marker) sleep 120" &
        wait
        ```

        ```sh run
        echo the next cell still runs
        ```

        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { stop(marker) }

        let ran = try TestEnvironment.run(["notebook", "run", "--shell-timeout", "1", path])
        #expect(ran.status != 0)
        #expect(
            ran.error.contains("slow.md:1: cell 1, `sh run`: the script ran past 1 s and was stopped"), "\(ran.error)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            written.contains("```output\nstarting\nerror: the script ran past 1 s and was stopped\n```"), "\(written)")
        #expect(written.contains("```output\nthe next cell still runs\n```"))
        #expect(!running(marker))
    }
}
