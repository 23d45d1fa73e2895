import Foundation
import Testing

@testable import LoupeBase

/// A gzip file read in chunks: members one after another are one stream (RFC 1952), and what
/// follows the last member is refused unless it is another member, as is a stream cut short.
struct ChunkedFileTests {
    private static func file(_ bytes: Data) throws -> String {
        let path = NSTemporaryDirectory() + "loupe-chunked-\(UUID().uuidString).json.gz"
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    private static func readAll(_ path: String, chunkBytes: Int) throws -> [UInt8] {
        let file = try ChunkedFile(path: path, chunkBytes: chunkBytes)
        var all: [UInt8] = []
        while let chunk = try file.next() { all += chunk }
        #expect(file.fraction == 1)
        return all
    }

    private static let first = Data((0..<5_000).map { "{\"event\": \($0)}\n" }.joined().utf8)
    private static let second = Data((0..<3_000).map { "[\($0)]\n" }.joined().utf8)

    @Test(arguments: [7, 4_096, 8 << 20])
    func membersOneAfterAnotherAreReadAsOneStream(chunkBytes: Int) throws {
        let path = try Self.file(try Gzip.compress(Self.first) + Gzip.compress(Self.second))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Self.readAll(path, chunkBytes: chunkBytes) == Array(Self.first + Self.second))
    }

    @Test(arguments: [7, 8 << 20])
    func bytesAfterTheStreamAreRefusedNamingWhere(chunkBytes: Int) throws {
        let packed = try Gzip.compress(Self.first)
        let path = try Self.file(packed + Data("trailing garbage".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FileReadError.self) { try Self.readAll(path, chunkBytes: chunkBytes) }
        #expect(
            error?.description
                == "\(path): cannot be read (16 bytes after the end of the gzip stream (at byte \(packed.count)) "
                + "are not another gzip member: the file is damaged or something was appended to it)")
    }

    @Test func aStreamCutShortIsAnError() throws {
        let packed = try Gzip.compress(Self.first)
        let path = try Self.file(packed.prefix(packed.count - 20))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FileReadError.self) { try Self.readAll(path, chunkBytes: 1 << 16) }
        #expect(error?.description.contains("the gzip stream is damaged") == true)
    }

    @Test func aPlainFileIsReadAsItIs() throws {
        let path = try Self.file(Self.second)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Self.readAll(path, chunkBytes: 1_000) == Array(Self.second))
        #expect(try ChunkedFile(path: path).isGzip == false)
    }
}
