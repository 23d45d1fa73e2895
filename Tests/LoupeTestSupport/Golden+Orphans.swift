import Foundation

extension Golden {
    /// The golden files in `snapshots` that no test beside it names, and the goldens whose text
    /// or styles file is missing: files a renamed or deleted test left behind.
    ///
    /// A golden's name is found in the `.swift` files of `tests` as a string literal that starts
    /// with a lower-case letter and holds a `-`, such as `"traces-list-120x36"`; an interpolated
    /// one (`"traces-tokens-\(width)x\(height)"`) names every file its literal parts match in
    /// order. Other literals are ignored, so a comment cannot name a golden by accident unless
    /// it quotes one.
    ///
    /// - Returns: the file names, sorted, each with why (`unnamed` or `no NAME.styles.txt`).
    package static func orphans(in snapshots: URL, namedBy tests: URL) throws -> [String] {
        let manager = FileManager.default
        let sources = try manager.contentsOfDirectory(atPath: tests.path).filter { $0.hasSuffix(".swift") }
        let patterns = try sources.flatMap { file in
            try namePatterns(in: String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8))
        }
        let files = try manager.contentsOfDirectory(atPath: snapshots.path).filter { $0.hasSuffix(".txt") }
        var problems: [String] = []
        for file in files.sorted() {
            let isStyles = file.hasSuffix(".styles.txt")
            let name = String(file.dropLast(isStyles ? ".styles.txt".count : ".txt".count))
            let partner = isStyles ? name + ".txt" : name + ".styles.txt"
            if !files.contains(partner) { problems.append("\(file): no \(partner)") }
            let whole = NSRange(name.startIndex..., in: name)
            let named = patterns.contains { $0.firstMatch(in: name, range: whole) != nil }
            if !named { problems.append("\(file): unnamed") }
        }
        return problems
    }

    /// One pattern per golden-like string literal of `source`: its literal parts escaped, each
    /// interpolation `\(…)` (which may hold a simple string literal) standing for any text.
    static func namePatterns(in source: String) throws -> [NSRegularExpression] {
        let literal = try NSRegularExpression(
            pattern: #""([a-z][a-z0-9-]*(?:\\\((?:[^()"\n]|"[^"\n]*")*\)[a-z0-9-]*)*)""#)
        let interpolation = try NSRegularExpression(pattern: #"\\\((?:[^()"\n]|"[^"\n]*")*\)"#)
        let range = NSRange(source.startIndex..., in: source)
        return try literal.matches(in: source, range: range).compactMap { match in
            guard let body = Range(match.range(at: 1), in: source).map({ String(source[$0]) }) else { return nil }
            let bodyRange = NSRange(body.startIndex..., in: body)
            var parts: [String] = []
            var last = body.startIndex
            for hole in interpolation.matches(in: body, range: bodyRange) {
                guard let holeRange = Range(hole.range, in: body) else { continue }
                parts.append(String(body[last..<holeRange.lowerBound]))
                last = holeRange.upperBound
            }
            parts.append(String(body[last...]))
            guard parts[0].contains("-") else { return nil }
            let pattern = parts.map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*")
            return try NSRegularExpression(pattern: "^(?:" + pattern + ")$")
        }
    }
}
