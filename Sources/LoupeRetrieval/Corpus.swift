import Foundation

/// A document read from a corpus file, before chunking.
package struct CorpusDocument: Hashable, Sendable {
    package var id: String
    package var title: String
    /// What is indexed and what chunk offsets point into: the title, a blank line, the text (or
    /// the text alone when there is no title).
    package var body: String

    package init(id: String, title: String, text: String) {
        self.id = id
        self.title = title
        self.body = title.isEmpty ? text : title + "\n\n" + text
    }
}

/// Reads corpus files: JSONL (`{"id", "title", "text", ...}`), Markdown and plain text.
package enum CorpusReader {
    package enum Format: String, Sendable, Codable {
        case jsonl, markdown, text

        package static func of(path: String) -> Format {
            let lower = path.lowercased()
            if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return .jsonl }
            if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") { return .markdown }
            return .text
        }
    }

    /// The text of a file's bytes, or why it is not indexable text (binary, not UTF-8).
    package static func text(_ data: Data, file: String) throws(RetrievalError) -> String {
        if data.prefix(8192).contains(0) { throw RetrievalError("\(file): binary file (NUL bytes), skipped") }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RetrievalError("\(file): not valid UTF-8, skipped")
        }
        return text
    }

    /// JSONL records; a malformed line is a warning naming it (and skipped), or with `strict`
    /// an error.
    package static func jsonl(_ text: String, file: String, strict: Bool) throws(RetrievalError) -> (
        documents: [CorpusDocument], warnings: [String]
    ) {
        var documents: [CorpusDocument] = []
        var warnings: [String] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            let problem: String
            if let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any] {
                let id =
                    (object["id"] as? String) ?? (object["_id"] as? String) ?? (object["id"] as? NSNumber)?.stringValue
                if let id, let body = object["text"] as? String {
                    documents.append(CorpusDocument(id: id, title: (object["title"] as? String) ?? "", text: body))
                    continue
                }
                problem = id == nil ? "no \"id\" (string or number)" : "no \"text\" string"
            } else {
                problem = "not a JSON object"
            }
            let message = "\(file):\(index + 1): \(problem)"
            if strict { throw RetrievalError(message) }
            warnings.append(message + ", line skipped")
        }
        return (documents, warnings)
    }
}

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

    /// Blocks are separated by blank lines; a block starting with `#` opens a new chunk.
    private static func markdownSections(_ bytes: [UInt8], maxWords: Int) -> [Range<Int>] {
        var blocks: [Range<Int>] = []
        var lineStart = 0
        var blockStart: Int?
        var blockEnd = 0
        var index = 0
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == 10 {
                let line = bytes[lineStart..<index]
                if line.allSatisfy(isSpace) {
                    if let s = blockStart { blocks.append(s..<blockEnd) }
                    blockStart = nil
                } else {
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
            let heading = bytes[block.lowerBound] == 35  // #
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
}
