import Foundation
import Glibc
import Testing

@testable import LoupeBase

/// Every reader of a user's file is bounded (`InputFile`): a file over the limit is refused from
/// its size, pipes and devices are refused by what they are without waiting on them, and the
/// paths that cannot be opened say why.
struct InputFileTests {
    private static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "loupe-input-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Bytes `read(2)` has returned to this thread so far (`rchar` of /proc/thread-self/io): a
    /// reader that refuses a file from its size reads next to nothing of it.
    private static func bytesReadByThisThread() throws -> Int {
        let text = String(decoding: try TextFile.bytes("/proc/thread-self/io"), as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// A sparse file one byte over the limit: refused by every reader, naming its size, the
    /// limit and how to raise it, having read (almost) none of it.
    @Test func aFileOverTheLimitIsRefusedWithoutBeingRead() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let limit = 64 << 20
        let path = directory + "/sample.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(limit + 1)) == 0)

        let before = try Self.bytesReadByThisThread()
        let blocks = #expect(throws: FileReadError.self) { try LineBlocks(path: path, limitBytes: limit) }
        let whole = #expect(throws: FileReadError.self) { try TextFile.bytes(path, limitBytes: limit) }
        let read = try Self.bytesReadByThisThread() - before
        #expect(read < 1 << 20, "the readers read \(read) bytes of a file they refuse from its size")
        #expect(blocks?.reason == .overInputLimit(bytes: limit + 1, limitBytes: limit, streamed: false))
        let message = try #require(blocks?.description)
        #expect(message.hasPrefix(path + ": it is 64 MB; Loupe reads inputs up to 64 MB"))
        #expect(message.contains("--max-input-mb") && message.contains("LOUPE_MAX_INPUT_MB"))
        #expect(whole?.reason == .tooLarge(bytes: limit + 1, limitBytes: limit))
    }

    /// A file within the limit reads as before, whole or in blocks.
    @Test func aFileWithinTheLimitIsReadWhole() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lines.jsonl"
        let text = (1...100).map { #"{"n": \#($0)}"# }.joined(separator: "\n")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let limit = text.utf8.count
        #expect(try TextFile.bytes(path, limitBytes: limit) == Array(text.utf8))
        let blocks = try LineBlocks(path: path, blockBytes: 100, limitBytes: limit)
        var all: [UInt8] = []
        while let block = try blocks.next() { all += block.bytes }
        #expect(all == Array(text.utf8))
    }

    /// /dev/zero never ends and a FIFO with no writer never starts: both are refused at once by
    /// what they are, by every reader.
    @Test func devicesAndPipesAreRefusedWithoutWaiting() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/trace.jsonl"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [("/dev/zero", "a character device"), (fifo, "a named pipe (FIFO)")] {
            let reasons = [
                #expect(throws: FileReadError.self) { try TextFile.bytes(path, limitBytes: 1 << 20) }?.reason,
                #expect(throws: FileReadError.self) { try LineBlocks(path: path, limitBytes: 1 << 20) }?.reason,
                #expect(throws: FileReadError.self) { try ChunkedFile(path: path) }?.reason,
            ]
            #expect(reasons.allSatisfy { $0 == .notRegularFile(kind: kind) }, "\(path): \(reasons)")
            let message = FileReadError(path: path, reason: .notRegularFile(kind: kind)).description
            #expect(message.contains("is \(kind), not a regular file") && message.contains("standard input"))
        }
    }

    /// A symbolic link loop, a link to nothing and a name that was not UTF-8 are each said as
    /// what they are, not as "no such file".
    @Test func pathsThatCannotBeOpenedSayWhy() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(symlink(directory + "/b", directory + "/a") == 0 && symlink(directory + "/a", directory + "/b") == 0)
        #expect(symlink(directory + "/gone.json", directory + "/dangling") == 0)
        let loop = #expect(throws: FileReadError.self) { try TextFile.bytes(directory + "/a") }
        #expect(loop?.reason == .symlinkLoop)
        #expect(loop?.description.contains("symbolic link loop") == true)
        let dangling = #expect(throws: FileReadError.self) { try TextFile.bytes(directory + "/dangling") }
        #expect(dangling?.reason == .danglingSymlink(target: directory + "/gone.json"))
        // A name with a byte that is not UTF-8 reaches Swift with U+FFFD in its place.
        let mangled = #expect(throws: FileReadError.self) { try TextFile.bytes(directory + "/caf\u{FFFD}.json") }
        #expect(mangled?.reason == .nameNotUTF8)
        #expect(mangled?.description.contains("not valid UTF-8") == true)
        let missing = #expect(throws: FileReadError.self) { try TextFile.bytes(directory + "/missing.json") }
        #expect(missing?.reason == .noSuchFile)
    }

    /// The limit comes from `LOUPE_MAX_INPUT_MB` when no flag sets it; a value that is not a
    /// positive number leaves the default.
    @Test func theLimitIsReadFromTheEnvironment() {
        #expect(InputFile.limitBytes(environment: nil) == 1 << 30)
        #expect(InputFile.limitBytes(environment: "3") == 3 << 20)
        #expect(InputFile.limitBytes(environment: "-1") == 1 << 30)
        #expect(InputFile.limitBytes(environment: "lots") == 1 << 30)
    }
}
