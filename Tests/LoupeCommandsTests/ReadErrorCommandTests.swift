import Foundation
import Testing

/// A file that cannot be read is reported as what it is (missing, a directory, not permitted),
/// with its path, by the real binary.
struct ReadErrorCommandTests {
    @Test(arguments: [
        ["qrels", "load"], ["prices", "load"], ["notebook", "run"], ["trace", "import"], ["eval", "run"],
    ])
    func aMissingFileAndADirectoryAreSaidToBeSo(command: [String]) throws {
        let directory = TestEnvironment.temporaryDirectory()
        let workspace = directory + "/w.sqlite"
        let missing = try TestEnvironment.run(["--workspace", workspace] + command + [directory + "/nope.txt"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("\(directory)/nope.txt: no such file"), "\(missing.error)")
        let folder = try TestEnvironment.run(["--workspace", workspace] + command + [directory])
        #expect(folder.error.contains("\(directory): is a directory"), "\(folder.error)")
    }

    /// Root reads any file, so the binary runs as `nobody` (setpriv, util-linux) on a 0000 file.
    @Test func aFileWithoutReadPermissionIsSaidToBeSo() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/qrels.tsv"
        try "q1\t0\td1\t1\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
        let (status, message) = try TestEnvironment.runAsNobody([
            "--workspace", directory + "/w.sqlite", "qrels", "load", file,
        ])
        #expect(status != 0)
        #expect(message.contains("\(file): permission denied"), "\(message)")
    }

    @Test func aFailingNotebookCellIsNamedOnStderrWithItsLineAndCutShort() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let notebook = directory + "/nb.md"
        let longArgument = String(repeating: "a", count: 100_000)
        try "# t\n\n```loupe\nworkspace info\nno-such-command \(longArgument)\n```\n"
            .write(toFile: notebook, atomically: true, encoding: .utf8)
        let result = try TestEnvironment.run(["notebook", "run", notebook])
        #expect(result.status != 0)
        #expect(result.error.hasPrefix("error: \(notebook):5: cell 1, `no-such-command aaa"), "\(result.error)")
        #expect(result.error.count < 1000 && result.output.count < 5000)
    }
}
