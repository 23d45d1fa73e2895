import Foundation
import LoupeBase
import Testing

@Suite struct ChildProcessTests {
    /// The exit status as a shell reports it: the code, or 128 + the signal that ended the child.
    @Test func reportsTheExitStatusAsAShellDoes() throws {
        #expect(try #require(ChildProcess.run(["sh", "-c", "exit 3"])).status == 3)
        #expect(try #require(ChildProcess.run(["true"])).status == 0)
        #expect(try #require(ChildProcess.run(["sh", "-c", "kill -9 $$"])).status == 128 + 9)
    }

    /// The child's own peak RSS: a child that touches 64 MiB reports at least that much.
    @Test func reportsTheChildsPeakResidentSet() throws {
        let exit = try #require(
            ChildProcess.run(["python3", "-c", "b = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1"]))
        #expect(exit.status == 0)
        #expect(exit.peakResidentBytes >= 64 * 1024 * 1024)
    }

    /// `silenceOutput` sends the child's standard output to /dev/null.
    @Test func silencesStandardOutputWhenAsked() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = "echo out; target=$(readlink /proc/$$/fd/1); echo \"$target\" > \(file)"
        #expect(try #require(ChildProcess.run(["sh", "-c", script], silenceOutput: true)).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "/dev/null\n")
    }

    @Test func aProgramThatCannotStartIsNil() {
        #expect(ChildProcess.run(["/nonexistent/loupe-no-such-program"]) == nil)
        #expect(ChildProcess.run([]) == nil)
    }
}
