import LoupeBase

/// Relevance judgments in TREC format (`qid iteration docid rel`, whitespace separated).
package struct Qrels: Hashable, Sendable {
    /// Query → document → relevance.
    package var judgments: [String: [String: Int]]

    package init(judgments: [String: [String: Int]]) { self.judgments = judgments }

    /// A line that is not four fields with an integer relevance is an error naming the line.
    package static func parse(_ text: String, file: String) throws(RetrievalError) -> Qrels {
        var judgments: [String: [String: Int]] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            guard fields.count == 4, let relevance = Int(fields[3]) else {
                throw RetrievalError(
                    "\(file):\(index + 1): expected 'query iteration document relevance', got '\(line.prefix(80))'")
            }
            judgments[String(fields[0]), default: [:]][String(fields[2])] = relevance
        }
        return Qrels(judgments: judgments)
    }
}
