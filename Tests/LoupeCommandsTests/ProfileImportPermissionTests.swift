import Foundation
import Testing

/// `profile import` of a file or directory it may not read, by the real binary run as `nobody`
/// (root reads anything): the path and "permission denied", not Foundation's error domain.
struct ProfileImportPermissionTests {
    private func importAsNobody(_ path: String, workspace: String) throws -> (status: Int32, error: String) {
        try TestEnvironment.runAsNobody(["--workspace", workspace, "profile", "import", path])
    }

    @Test func anUnreadableFileAndDirectoryAreSaidToBePermissionDenied() throws {
        let directory = TestEnvironment.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
        let file = directory + "/trace.json"
        try #"{"traceEvents": []}"#.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file)
        let ranks = directory + "/ranks"
        try FileManager.default.createDirectory(atPath: ranks, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: ranks)
        for path in [file, ranks] {
            let result = try importAsNobody(path, workspace: directory + "/w.sqlite")
            #expect(result.status == 1)
            #expect(result.error.contains("\(path): permission denied"), "\(result.error)")
            #expect(!result.error.contains("NSCocoaErrorDomain"), "\(result.error)")
        }
    }
}
