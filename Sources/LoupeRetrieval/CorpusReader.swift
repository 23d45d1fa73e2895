import Foundation
import LoupeBase

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

    /// Why a line that Foundation would not read as an object is not one: valid JSON of
    /// another kind, or the syntax error (too deep nesting included) and its column.
    private static func whyNotAnObject(_ line: String) -> String {
        do {
            _ = try JSONValue.parse(line)
            return "not a JSON object"
        } catch {
            return "not valid JSON (column \(error.column): \(error.message))"
        }
    }

    /// JSONL records; a malformed line is a warning naming it (and skipped), or with `strict`
    /// an error.
    package static func jsonl(_ text: String, file: String, strict: Bool) throws(RetrievalError) -> (
        documents: [CorpusDocument], warnings: [String]
    ) {
        var documents: [CorpusDocument] = []
        var warnings: [String] = []
        // "\r\n" is one Character, so CRLF lines are split on it by name.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, line) in lines.enumerated() {
            // JSON allows whitespace around a value, so only a blank line needs looking at first
            // (Foundation's `trimmingCharacters` on every line was a third of reading Cranfield ×100).
            if line.allSatisfy(\.isWhitespace) { continue }
            let problem: String
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                let id =
                    (object["id"] as? String) ?? (object["_id"] as? String) ?? (object["id"] as? NSNumber)?.stringValue
                if let id, let body = object["text"] as? String {
                    documents.append(CorpusDocument(id: id, title: (object["title"] as? String) ?? "", text: body))
                    continue
                }
                problem = id == nil ? "no \"id\" (string or number)" : "no \"text\" string"
            } else {
                problem = Self.whyNotAnObject(line.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let message = "\(file):\(index + 1): \(problem)"
            if strict { throw RetrievalError(message) }
            warnings.append(message + ", line skipped")
        }
        return (documents, warnings)
    }
}
