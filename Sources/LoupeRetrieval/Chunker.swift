import Foundation

/// How documents are cut into chunks; stored with the source so a re-ingest with other
/// parameters is not mistaken for an unchanged one.
package enum Chunker: Hashable, Sendable, Codable {
    /// The whole document is one chunk (JSONL corpora of passages, such as Cranfield or BEIR).
    case document
    /// Windows of `size` whitespace-separated words, each starting `size − overlap` after the last.
    case words(size: Int, overlap: Int)
    /// Markdown: a heading starts a chunk; paragraphs join the current chunk up to `maxWords`.
    case markdown(maxWords: Int)

    /// Byte ranges of `body` (UTF-8), in order.
    package func ranges(_ body: String) -> [Range<Int>] {
        let bytes = Array(body.utf8)
        switch self {
        case .document:
            return bytes.isEmpty ? [] : [0..<bytes.count]
        case .words(let size, let overlap):
            let words = Self.words(bytes)
            guard !words.isEmpty else { return [] }
            let step = max(1, size - max(0, min(overlap, size - 1)))
            var result: [Range<Int>] = []
            var start = 0
            while true {
                let end = min(words.count, start + size)
                result.append(words[start].lowerBound..<words[end - 1].upperBound)
                if end == words.count { break }
                start += step
            }
            return result
        case .markdown(let maxWords):
            return Self.markdownSections(bytes, maxWords: maxWords)
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 10 || byte == 13 }

    private static func words(_ bytes: [UInt8]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?
        for (index, byte) in bytes.enumerated() {
            if isSpace(byte) {
                if let s = start { result.append(s..<index) }
                start = nil
            } else if start == nil {
                start = index
            }
        }
        if let s = start { result.append(s..<bytes.count) }
        return result
    }

    /// Blocks are separated by blank lines, except inside a fenced code block (``` or ~~~),
    /// which stays one block; a block starting with an ATX heading (`# ` to `###### `) opens a
    /// new chunk, so a `# comment` in a shell example does not.
    private static func markdownSections(_ bytes: [UInt8], maxWords: Int) -> [Range<Int>] {
        var blocks: [Range<Int>] = []
        var lineStart = 0
        var blockStart: Int?
        var blockEnd = 0
        var inFence = false
        var index = 0
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == 10 {
                let line = bytes[lineStart..<index]
                if isFence(line) { inFence.toggle() }
                if line.allSatisfy(isSpace) && !inFence {
                    if let s = blockStart { blocks.append(s..<blockEnd) }
                    blockStart = nil
                } else if !line.allSatisfy(isSpace) {
                    if blockStart == nil { blockStart = lineStart }
                    blockEnd = index
                }
                lineStart = index + 1
            }
            index += 1
        }
        if let s = blockStart { blocks.append(s..<blockEnd) }
        var chunks: [Range<Int>] = []
        var current: Range<Int>?
        var currentWords = 0
        for block in blocks {
            let count = words(Array(bytes[block])).count
            let heading = markdownHeading(bytes[block]) != nil
            if let open = current, !heading, currentWords + count <= maxWords {
                current = open.lowerBound..<block.upperBound
                currentWords += count
            } else {
                if let open = current { chunks.append(open) }
                current = block
                currentWords = count
            }
        }
        if let open = current { chunks.append(open) }
        return chunks
    }

    /// A line that opens or closes a fenced code block: up to three spaces, then ``` or ~~~.
    private static func isFence(_ line: ArraySlice<UInt8>) -> Bool {
        let text = line.drop { $0 == 32 }
        guard line.count - text.count <= 3, let first = text.first, first == 96 || first == 126 else { return false }
        return text.prefix { $0 == first }.count >= 3
    }

    /// The text of the ATX heading `line` starts with (`## Install` → `Install`; `#` alone is an
    /// empty heading): one to six `#`, then a space, a tab or the end of the line. Nil when the
    /// line is no heading (`#hashtag`, `####### seven`). The chunker starts a chunk at one; a
    /// search hit is titled by it.
    package static func markdownHeading<Line: Collection<UInt8>>(_ line: Line) -> String? {
        let hashes = line.prefix { $0 == 35 }.count
        guard (1...6).contains(hashes) else { return nil }
        let rest = line.dropFirst(hashes)
        guard let after = rest.first else { return "" }
        guard after == 32 || after == 9 || after == 10 else { return nil }
        return String(decoding: rest.prefix { $0 != 10 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }
}
