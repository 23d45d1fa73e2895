import Foundation
import LoupeStore

/// What a queue's items are drawn from, as `--from` says it: a kind, then the filter of the panel
/// that lists that kind.
///
/// - `answers run:3 [failed|passed|errors] [item:ID] [scorer<0.5] [WORD…]`: a run's answers (the
///   Evals panel's failed filter; `scorer<0.5` compares one scorer's value; other words must
///   appear in the input or output);
/// - `traces [TRACE FILTER]`: traces as the Traces panel's `/` filter keeps them (`errors`,
///   `model:gpt-4o`, `since:2h`, `name:…`, …).
package struct ReviewSource: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable {
        case answers, traces
    }

    package var kind: Kind
    package var text: String
    /// answers: the run.
    package var run: Int64?
    package var failedOnly = false
    package var passedOnly = false
    package var errorsOnly = false
    package var item: String?
    package var scoreBounds: [(scorer: String, op: String, value: Double)] = []
    package var words: [String] = []
    /// traces: the Traces panel's filter.
    package var traceFilter: TraceFilter?

    package static func == (a: Self, b: Self) -> Bool { a.text == b.text }
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }

    package init(_ text: String) throws(ReviewError) {
        self.text = text
        var words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let first = words.first else {
            throw ReviewError("--from is empty: say what to review, e.g. --from \"answers run:1 failed\"")
        }
        guard let kind = Kind(rawValue: first) else {
            throw ReviewError(
                "--from \"\(first) …\": items are drawn from answers (answers run:N …) or traces (traces FILTER)")
        }
        self.kind = kind
        words.removeFirst()
        switch kind {
        case .traces:
            traceFilter = TraceFilter(words.joined(separator: " "))
            if let problems = traceFilter?.problems { throw ReviewError("--from: \(problems)") }
        case .answers:
            for word in words {
                if word.hasPrefix("run:") {
                    guard let id = Int64(word.dropFirst(4)) else { throw ReviewError("--from: '\(word)' is run:N") }
                    run = id
                } else if word == "failed" {
                    failedOnly = true
                } else if word == "passed" {
                    passedOnly = true
                } else if word == "errors" {
                    errorsOnly = true
                } else if word.hasPrefix("item:") {
                    item = String(word.dropFirst(5))
                } else if let bound = Self.scoreBound(word) {
                    scoreBounds.append(bound)
                } else {
                    self.words.append(word.lowercased())
                }
            }
            guard run != nil else {
                throw ReviewError("--from \"\(text)\": name the run whose answers to review (answers run:N)")
            }
        }
    }

    /// `scorer<0.5` or `scorer>=0.3`: a comparison of one scorer's value.
    static func scoreBound(_ word: String) -> (scorer: String, op: String, value: Double)? {
        for op in ["<=", ">=", "<", ">"] {
            guard let range = word.range(of: op) else { continue }
            let name = String(word[..<range.lowerBound])
            guard !name.isEmpty, let value = Double(word[range.upperBound...]), value.isFinite else { return nil }
            return (name, op, value)
        }
        return nil
    }

    /// Whether `value` holds against a bound read by ``scoreBound(_:)``.
    static func holds(_ value: Double, _ op: String, _ bound: Double) -> Bool {
        switch op {
        case "<=": value <= bound
        case ">=": value >= bound
        case "<": value < bound
        default: value > bound
        }
    }
}
