import Foundation
import Testing

@testable import LoupeBase

struct TextFileTests {
    private static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "loupe-textfile-\(UUID().uuidString)-\(name)"
    }

    @Test func aMissingFileIsSaidToBeMissing() {
        let path = Self.temporaryPath("missing.txt")
        let error = #expect(throws: FileReadError.self) { try TextFile.read(path) }
        #expect(error?.reason == .noSuchFile)
        #expect(error?.description == "\(path): no such file (check the path)")
    }

    @Test func aDirectoryIsSaidToBeADirectory() throws {
        let path = Self.temporaryPath("dir")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FileReadError.self) { try TextFile.read(path) }
        #expect(error?.reason == .isDirectory)
        #expect(error?.description.contains("is a directory") == true)
    }

    @Test(arguments: [EACCES, EPERM])
    func permissionErrnosSayPermissionDenied(code: Int32) {
        let error = FileReadError(path: "/x/qrels.tsv", errno: code)
        #expect(error.description == "/x/qrels.tsv: permission denied (check the file's permissions)")
    }

    @Test func invalidUTF8NamesTheOffsetOfTheFirstBadByte() throws {
        let path = Self.temporaryPath("latin1.txt")
        try Data([0x61, 0x62, 0xC3, 0xA9, 0xFF, 0x63]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FileReadError.self) { try TextFile.read(path) }
        #expect(error?.reason == .notUTF8(byteOffset: 4))
    }

    @Test func aFileOverTheLimitIsRefusedWithBothSizes() throws {
        let path = Self.temporaryPath("big.txt")
        try Data(repeating: 0x61, count: 2 << 20).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FileReadError.self) { try TextFile.read(path, limitBytes: 1 << 20) }
        #expect(error?.description == "\(path): the file is 2 MB, the limit for this kind of file is 1 MB")
    }

    @Test func aTextFileReadsWhole() throws {
        let path = Self.temporaryPath("ok.txt")
        try "héllo\nworld".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try TextFile.read(path) == "héllo\nworld")
    }
}
