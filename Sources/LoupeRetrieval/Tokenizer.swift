/// How text becomes index terms: lower-cased, split on anything that is not `a-z` or `0-9`,
/// stopwords dropped, optionally stemmed. The default is the tokenisation bm25s, rank_bm25 and
/// tantivy were measured with on Cranfield (research notes §5.1), so scores can be compared.
package struct RetrievalTokenizer: Hashable, Sendable, Codable {
    package var stopwords: Set<String>
    package var stem: Bool

    package init(stopwords: Set<String> = RetrievalTokenizer.englishStopwords, stem: Bool = false) {
        self.stopwords = stopwords
        self.stem = stem
    }

    /// Elasticsearch's and Lucene's 33-word English stop list.
    package static let englishStopwords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
        "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
        "will", "with",
    ]

    /// The terms of `text`, in order, repeats kept.
    package func terms(_ text: String) -> [String] {
        tokens(text).map(\.term)
    }

    /// Each term with the byte range of the word it came from in `text`'s UTF-8, for highlighting.
    package func tokens(_ text: String) -> [(term: String, range: Range<Int>)] {
        var result: [(String, Range<Int>)] = []
        var current: [UInt8] = []
        var start = 0
        var offset = 0
        func flush() {
            guard !current.isEmpty else { return }
            let word = String(decoding: current, as: UTF8.self)
            current.removeAll(keepingCapacity: true)
            guard !stopwords.contains(word) else { return }
            result.append((stem ? PorterStemmer.stem(word) : word, start..<offset))
        }
        for byte in text.utf8 {
            let lowered = byte >= 65 && byte <= 90 ? byte + 32 : byte
            if (lowered >= 97 && lowered <= 122) || (lowered >= 48 && lowered <= 57) {
                if current.isEmpty { start = offset }
                current.append(lowered)
            } else {
                flush()
            }
            offset += 1
        }
        flush()
        return result
    }
}
