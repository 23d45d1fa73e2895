import Foundation
import LoupeBase
import Testing

struct LineBlocksTests {
    /// Blocks end at line ends, hold the whole file between them in order, and know their first
    /// line's number, whatever the block size: shorter than a line, about a line, larger than
    /// the file; with and without a final newline.
    @Test(arguments: [1, 7, 64, 1 << 20], [true, false])
    func blocksAreWholeLinesNumberedFromOne(blockBytes: Int, finalNewline: Bool) throws {
        let lines = (1...40).map { String(repeating: "x", count: ($0 * 37) % 90) + "·\($0)" }
        let text = lines.joined(separator: "\n") + (finalNewline ? "\n" : "")
        let path = NSTemporaryDirectory() + "loupe-blocks-\(UUID().uuidString).jsonl"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let blocks = try LineBlocks(path: path, blockBytes: blockBytes)
        #expect(blocks.size == text.utf8.count)
        var joined: [UInt8] = []
        var count = 0
        while let block = try blocks.next() {
            count += 1
            let blockLines = String(decoding: block.bytes, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false)
            #expect(blockLines[0] == lines[block.firstLine - 1])
            if blocks.offset < blocks.size { #expect(block.bytes.last == 0x0A) }
            joined += block.bytes
            #expect(blocks.offset == joined.count)
        }
        #expect(joined == Array(text.utf8))
        #expect(count >= (blockBytes >= text.utf8.count ? 1 : 2))
        #expect(try blocks.next() == nil)
    }

    @Test func aMissingFileIsSaidToBeMissing() {
        let error = #expect(throws: FileReadError.self) { try LineBlocks(path: "/nonexistent/runs.jsonl") }
        #expect(error?.reason == .noSuchFile)
    }
}
