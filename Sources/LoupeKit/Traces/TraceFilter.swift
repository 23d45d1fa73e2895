import Foundation
import LoupeBase
import LoupeStore

/// The trace list's filter, typed after `/` and kept with `enter` (k9s's and Langfuse's list
/// filters): every term must hold.
///
/// - `errors` (or `errors>0`), `steps>5`, `spans<=10`, `tokens>=1000`, `cost>0.01`,
///   `duration>2s` (`ms`, `s`, `m`): a number compared with `<`, `<=`, `>`, `>=` or `=`;
/// - `format:inspect`, `name:shock`, `model:gpt-4o`: a field containing the text;
/// - `since:2h` (`m`, `h`, `d`) or `since:2026-11-20`, `before:2026-11-22`: when the trace
///   started (when it was imported, for a trace without times);
/// - any other word: in the name, the format, the models or the file's trace id.
package struct TraceFilter: Hashable, Sendable {
    package let text: String
    private let terms: [Term]
    /// What could not be read (a time that is not `30m`, `2h`, `7d` or a date), said on the
    /// status line; such a term matches nothing, as a filter that cannot hold.
    package var problems: String? {
        let unreadable = terms.compactMap { term -> String? in
            if case .unreadable(let word) = term { word } else { nil }
        }
        return unreadable.isEmpty
            ? nil : unreadable.joined(separator: ", ") + ": a time is 30m, 2h, 7d or a date such as 2026-11-20"
    }

    /// A number of a trace's summary.
    enum Measure: String, Hashable, Sendable {
        case errors, steps, spans, tokens, cost, duration
    }

    enum Comparison: String, Hashable, Sendable, CaseIterable {
        // Two-character operators first, so `<=` is not read as `<` then `=5`.
        case atMost = "<="
        case atLeast = ">="
        case below = "<"
        case above = ">"
        case equal = "="

        func holds(_ actual: Double, _ value: Double) -> Bool {
            switch self {
            case .atMost: actual <= value
            case .atLeast: actual >= value
            case .below: actual < value
            case .above: actual > value
            case .equal: actual == value
            }
        }
    }

    /// The text a word looks in: one field, or the name, format and trace id together.
    enum Field: String, Hashable, Sendable {
        case name, format, id, model
    }

    enum Term: Hashable, Sendable {
        case compare(Measure, Comparison, Double)
        case contains(Field?, String)
        /// Started at or after this many seconds since 1970 (`since:`).
        case startedSince(Double)
        /// Started before (`before:`).
        case startedBefore(Double)
        /// A `since:` or `before:` whose time could not be read.
        case unreadable(String)
    }

    /// `since:2h` is read against `now`, once, when the filter is made.
    package init(_ text: String, now: Date = Date()) {
        self.text = text
        terms = text.split(separator: " ").map { Self.term(String($0), now: now) }
    }

    private static func term(_ word: String, now: Date) -> Term {
        let lower = word.lowercased()
        for prefix in ["since:", "before:"] where lower.hasPrefix(prefix) {
            guard let moment = moment(String(lower.dropFirst(prefix.count)), now: now) else {
                return .unreadable(word)
            }
            return prefix == "since:" ? .startedSince(moment) : .startedBefore(moment)
        }
        if lower == "errors" || lower == "error" { return .compare(.errors, .above, 0) }
        for comparison in Comparison.allCases {
            guard let range = lower.range(of: comparison.rawValue) else { continue }
            guard let measure = Measure(rawValue: String(lower[..<range.lowerBound])),
                let value = number(String(lower[range.upperBound...]), of: measure)
            else { break }
            return .compare(measure, comparison, value)
        }
        if let colon = lower.firstIndex(of: ":"), let field = Field(rawValue: String(lower[..<colon])) {
            return .contains(field, String(lower[lower.index(after: colon)...]))
        }
        return .contains(nil, lower)
    }

    /// `30m`, `2h`, `7d` ago, or a date `2026-11-20` (UTC midnight), as seconds since 1970.
    private static func moment(_ text: String, now: Date) -> Double? {
        for (suffix, scale) in [("m", 60.0), ("h", 3600.0), ("d", 86400.0)] where text.hasSuffix(suffix) {
            if let amount = Double(text.dropLast()) { return now.timeIntervalSince1970 - amount * scale }
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: text)?.timeIntervalSince1970
    }

    /// `2s`, `150ms`, `1.5m` for durations (as seconds); plain numbers otherwise.
    private static func number(_ text: String, of measure: Measure) -> Double? {
        guard measure == .duration else { return Double(text) }
        for (suffix, scale) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return Double(text)
    }

    /// When `trace` started, in seconds since 1970: its first span, or its import when untimed.
    private static func started(_ trace: TraceSummary) -> Double {
        trace.timed ? Double(trace.startedNs) / 1e9 : trace.importedAt.timeIntervalSince1970
    }

    /// True when `trace` satisfies every term.
    package func matches(_ trace: TraceSummary) -> Bool {
        terms.allSatisfy { term in
            switch term {
            case .compare(let measure, let comparison, let value):
                let actual: Double? =
                    switch measure {
                    case .errors: Double(trace.errorCount)
                    case .steps: Double(trace.stepCount)
                    case .spans: Double(trace.spanCount)
                    case .tokens:
                        trace.inputTokens == nil && trace.outputTokens == nil
                            ? nil : Double((trace.inputTokens ?? 0) + (trace.outputTokens ?? 0))
                    case .cost: trace.cost
                    case .duration: trace.timed ? Double(trace.durationNs) / 1e9 : nil
                    }
                return actual.map { comparison.holds($0, value) } ?? false
            case .contains(let field, let text):
                let haystack: String =
                    switch field {
                    case .name: trace.name
                    case .format: trace.format
                    case .id: trace.externalID
                    case .model: trace.models.joined(separator: " ")
                    case nil: "\(trace.name) \(trace.format) \(trace.externalID) \(trace.models.joined(separator: " "))"
                    }
                return TextSearch.containsIgnoringCase(haystack, text)
            case .startedSince(let moment): return Self.started(trace) >= moment
            case .startedBefore(let moment): return Self.started(trace) < moment
            case .unreadable: return false
            }
        }
    }
}
