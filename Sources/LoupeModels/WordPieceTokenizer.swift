import Foundation
import LoupeBase

/// BERT's tokenizer, as Hugging Face `tokenizers` runs it for uncased models:
///
/// 1. normalise: drop NUL, U+FFFD and control characters, turn whitespace into spaces, put
///    spaces around CJK ideographs, strip accents (NFD, then drop nonspacing marks) and
///    lower-case;
/// 2. pre-tokenise: split on whitespace, and split off every punctuation character (ASCII
///    punctuation and Unicode P* categories) as its own word;
/// 3. WordPiece: greedy longest match from the vocabulary, continuation pieces prefixed `##`;
///    a word longer than 100 characters, or with a part no piece matches, becomes `[UNK]`.
///
/// Encoding adds `[CLS]` and `[SEP]` and truncates to `maxTokens` including them.
package struct WordPieceTokenizer: Sendable {
    package let vocabulary: [String]
    private let ids: [String: Int32]
    package let maxTokens: Int
    package let unknownID: Int32
    package let classifierID: Int32
    package let separatorID: Int32
    package let paddingID: Int32

    /// A tokenizer over `vocabulary` (index = token id), which must hold the special tokens.
    package init(vocabulary: [String], maxTokens: Int = 256) throws(ModelError) {
        guard vocabulary.count <= Int32.max else {
            throw ModelError(file: "vocab.txt", message: "has \(vocabulary.count) tokens, more than token ids hold")
        }
        var ids: [String: Int32] = [:]
        for (index, token) in vocabulary.enumerated() where ids[token] == nil { ids[token] = Int32(index) }
        func special(_ token: String) throws(ModelError) -> Int32 {
            guard let id = ids[token] else { throw ModelError(file: "vocab.txt", message: "has no \(token) token") }
            return id
        }
        self.vocabulary = vocabulary
        self.ids = ids
        self.maxTokens = maxTokens
        unknownID = try special("[UNK]")
        classifierID = try special("[CLS]")
        separatorID = try special("[SEP]")
        paddingID = try special("[PAD]")
    }

    /// Reads `vocab.txt`: one token per line, the line number is the id.
    package init(vocabularyFile path: String, maxTokens: Int = 256) throws(ModelError) {
        let text: String
        do {
            text = try TextFile.read(path, limitBytes: 64 << 20)
        } catch {
            throw ModelError(reading: error)
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.hasSuffix("\r") ? $0.dropLast() : $0)
        }
        if lines.last == "" { lines.removeLast() }
        try self.init(vocabulary: lines, maxTokens: maxTokens)
    }

    /// The token ids of `text`: `[CLS] … [SEP]`, at most `maxTokens` of them.
    package func encode(_ text: String) -> [Int32] {
        let pieces = wordPieces(text, atMost: maxTokens - 2)
        return [classifierID] + pieces + [separatorID]
    }

    /// A sentence pair, `[CLS] A [SEP] B [SEP]`, with token types 0 for the first part and 1
    /// for the second. When too long, the longer side loses its last piece until it fits
    /// ("longest first", as Hugging Face truncates pairs).
    package func encodePair(_ first: String, _ second: String) -> (ids: [Int32], types: [Int32]) {
        // Each side keeps at most maxTokens - 3 pieces; longest-first ends the same from there.
        var a = wordPieces(first, atMost: maxTokens - 3)
        var b = wordPieces(second, atMost: maxTokens - 3)
        while a.count + b.count > maxTokens - 3 {
            if a.count > b.count { a.removeLast() } else { b.removeLast() }
        }
        let ids = [classifierID] + a + [separatorID] + b + [separatorID]
        let types = [Int32](repeating: 0, count: a.count + 2) + [Int32](repeating: 1, count: b.count + 1)
        return (ids, types)
    }

    /// The tokens of `ids`, for display.
    package func tokens(_ ids: [Int32]) -> [String] {
        ids.map { Int($0) < vocabulary.count ? vocabulary[Int($0)] : "[UNK]" }
    }

    /// The WordPiece ids of `text`, without special tokens or truncation.
    package func wordPieces(_ text: String) -> [Int32] {
        var result: [Int32] = []
        for word in words(normalize(text)) { result += wordPiece(word) }
        return result
    }

    /// The first `limit` WordPiece ids of `text`: the same as `wordPieces(text).prefix(limit)`,
    /// but it normalises only as much of the text as those pieces need, in doubling windows cut
    /// at whitespace (which no normalisation step crosses), so a 50 MB question costs what its
    /// first few hundred words cost.
    package func wordPieces(_ text: String, atMost limit: Int) -> [Int32] {
        let scalars = text.unicodeScalars
        var result: [Int32] = []
        var start = scalars.startIndex
        var window = 4096
        while start < scalars.endIndex && result.count < limit {
            var end = scalars.index(start, offsetBy: window, limitedBy: scalars.endIndex) ?? scalars.endIndex
            while end < scalars.endIndex && !Self.isWordBoundary(scalars[end]) { scalars.formIndex(after: &end) }
            for word in words(normalize(String(scalars[start..<end]))) {
                result += wordPiece(word)
                if result.count >= limit { break }
            }
            start = end
            window *= 2
        }
        return Array(result.prefix(limit))
    }

    /// Whitespace that normalisation keeps as a space (not a control character it drops), so
    /// cutting the text there splits no word.
    private static func isWordBoundary(_ scalar: Unicode.Scalar) -> Bool {
        isWhitespace(scalar) && !isControl(scalar)
    }

    // MARK: - Normalisation and pre-tokenisation

    func normalize(_ text: String) -> String {
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value == 0 || scalar.value == 0xFFFD || WordPieceTokenizer.isControl(scalar) { continue }
            if WordPieceTokenizer.isWhitespace(scalar) {
                cleaned.append(" ")
            } else if WordPieceTokenizer.isCJK(scalar) {
                cleaned.append(" ")
                cleaned.append(scalar)
                cleaned.append(" ")
            } else {
                cleaned.append(scalar)
            }
        }
        var stripped = String.UnicodeScalarView()
        for scalar in String(cleaned).decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            stripped.append(scalar)
        }
        return String(stripped).lowercased()
    }

    func words(_ normalized: String) -> [[Unicode.Scalar]] {
        var words: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        for scalar in normalized.unicodeScalars {
            if WordPieceTokenizer.isWhitespace(scalar) {
                if !current.isEmpty { words.append(current) }
                current = []
            } else if WordPieceTokenizer.isPunctuation(scalar) {
                if !current.isEmpty { words.append(current) }
                words.append([scalar])
                current = []
            } else {
                current.append(scalar)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    private func wordPiece(_ word: [Unicode.Scalar]) -> [Int32] {
        if word.count > 100 { return [unknownID] }
        var pieces: [Int32] = []
        var start = 0
        while start < word.count {
            var end = word.count
            var found: Int32?
            while start < end {
                var candidate = String(String.UnicodeScalarView(word[start..<end]))
                if start > 0 { candidate = "##" + candidate }
                if let id = ids[candidate] {
                    found = id
                    break
                }
                end -= 1
            }
            guard let found else { return [unknownID] }
            pieces.append(found)
            start = end
        }
        return pieces
    }

    // MARK: - Character classes (as BERT defines them)

    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar.properties.isWhitespace
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\t" || scalar == "\n" || scalar == "\r" { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .unassigned, .privateUse, .surrogate: return true
        default: return false
        }
    }

    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if (33...47).contains(value) || (58...64).contains(value) || (91...96).contains(value)
            || (123...126).contains(value)
        {
            return true
        }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation:
            return true
        default:
            return false
        }
    }

    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F, 0x2B740...0x2B81F,
            0x2B820...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default:
            return false
        }
    }
}
