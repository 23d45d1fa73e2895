import Foundation

/// The answer normalisation of SQuAD's official evaluation script (lower case, no punctuation,
/// no articles, single spaces), which normalised-exact, contains and token F1 share.
package enum TextNormalizer {
    package static func normalize(_ text: String) -> String { tokens(text).joined(separator: " ") }

    /// SQuAD's `normalize_answer`, split into tokens: lower case, ASCII punctuation removed (not
    /// replaced: "don't" → "dont"), the articles a/an/the dropped.
    package static func tokens(_ text: String) -> [String] {
        var cleaned = ""
        cleaned.reserveCapacity(text.utf8.count)
        for character in text.lowercased() where !(character.isASCII && punctuation.contains(character)) {
            cleaned.append(character)
        }
        return cleaned.split(whereSeparator: \.isWhitespace).map(String.init).filter { !articles.contains($0) }
    }

    /// Python's `string.punctuation`.
    static let punctuation = Set(##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##)
    static let articles: Set = ["a", "an", "the"]

    /// SQuAD's token F1: the harmonic mean of the shared-token precision and recall (bags of
    /// tokens); 1 when both are empty.
    package static func tokenF1(_ prediction: String, _ target: String) -> Double {
        let predicted = tokens(prediction)
        let gold = tokens(target)
        if predicted.isEmpty || gold.isEmpty { return predicted.isEmpty && gold.isEmpty ? 1 : 0 }
        var counts: [String: Int] = [:]
        for token in gold { counts[token, default: 0] += 1 }
        var common = 0
        for token in predicted where (counts[token] ?? 0) > 0 {
            counts[token]! -= 1
            common += 1
        }
        guard common > 0 else { return 0 }
        let precision = Double(common) / Double(predicted.count)
        let recall = Double(common) / Double(gold.count)
        return 2 * precision * recall / (precision + recall)
    }

    /// The last number written in `text` ("… so the answer is 1,260.5." → 1260.5).
    package static func lastNumber(_ text: String) -> Double? {
        guard let regex = try? NSRegularExpression(pattern: #"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?"#) else {
            return nil
        }
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        for match in matches.reversed() {
            guard let range = Range(match.range, in: text) else { continue }
            if let value = Double(text[range].replacingOccurrences(of: ",", with: "")) { return value }
        }
        return nil
    }

    /// The JSON inside a Markdown code fence, or the text itself.
    package static func stripCodeFence(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("```"), trimmed.hasSuffix("```"), trimmed.count >= 6 else { return trimmed }
        var body = trimmed.dropFirst(3).dropLast(3)
        if let newline = body.firstIndex(of: "\n") { body = body[body.index(after: newline)...] }
        return body.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
