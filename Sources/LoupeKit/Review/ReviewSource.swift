import Foundation
import LoupeEvals
import LoupeStore

/// What a queue's items are drawn from, as `--from` says it: a kind, then the filter of the panel
/// that lists that kind.
///
/// - `answers run:3 [failed|passed|errors] [item:ID] [scorer<0.5] [WORD…]`: a run's answers (the
///   Evals panel's failed filter; `scorer<0.5` compares one scorer's value; other words must
///   appear in the input or output);
/// - `traces [TRACE FILTER]`: traces as the Traces panel's `/` filter keeps them (`errors`,
///   `model:gpt-4o`, `since:2h`, `name:…`, …);
/// - `steps [trace:ID] [kind:llm|tool|…] [errors] [name:TEXT] [model:TEXT]`: spans of the traces;
/// - `sessions [WORD…]`: sessions whose id or turns' names hold every word;
/// - `hits record:N|run:N [k:K]`: the top K (10) hits of a saved query, or of every answer of a
///   retrieval run, each a (query, chunk) pair.
package struct ReviewSource: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable, CaseIterable {
        case answers, traces, steps, sessions, hits

        /// What a rubric must apply to for items of this kind.
        package var target: Rubric.Target {
            switch self {
            case .answers: .answer
            case .traces: .trace
            case .steps: .step
            case .sessions: .session
            case .hits: .hit
            }
        }
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
    /// steps: one trace, a span kind, errors only, words in the name or model.
    package var trace: Int64?
    package var spanKind: String?
    package var name: String?
    package var model: String?
    /// hits: a saved query, and how many of its hits.
    package var record: Int64?
    package var depth = 10

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
                "--from \"\(first) …\": items are drawn from answers (answers run:N …), traces (traces FILTER), "
                    + "steps (steps trace:ID kind:llm …), sessions or hits (hits record:N)")
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
        case .steps:
            for word in words {
                if let id = Self.number(word, "trace:") {
                    trace = id
                } else if word.hasPrefix("kind:") {
                    spanKind = String(word.dropFirst(5)).lowercased()
                } else if word == "errors" {
                    errorsOnly = true
                } else if word.hasPrefix("name:") {
                    name = String(word.dropFirst(5)).lowercased()
                } else if word.hasPrefix("model:") {
                    model = String(word.dropFirst(6)).lowercased()
                } else {
                    throw ReviewError(
                        "--from: '\(word)' is not a step filter (trace:ID, kind:llm|tool|…, errors, name:TEXT, model:TEXT)"
                    )
                }
            }
        case .sessions:
            self.words = words.map { $0.lowercased() }
        case .hits:
            for word in words {
                if let id = Self.number(word, "record:") {
                    record = id
                } else if let id = Self.number(word, "run:") {
                    run = id
                } else if let k = Self.number(word, "k:"), k >= 1, k <= 1_000 {
                    depth = Int(k)
                } else {
                    throw ReviewError("--from: '\(word)' is not a hits filter (record:N or run:N, k:K)")
                }
            }
            guard (record == nil) != (run == nil) else {
                throw ReviewError(
                    "--from \"\(text)\": name one saved query (hits record:N) or retrieval run (hits run:N)")
            }
        }
    }

    /// The number after `prefix` in `word`, if `word` is `prefix` and a whole number.
    static func number(_ word: String, _ prefix: String) -> Int64? {
        guard word.hasPrefix(prefix) else { return nil }
        return Int64(word.dropFirst(prefix.count))
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
