import Foundation
import LoupeStore
import LoupeTUI

/// The trace list's filter, typed after `/` and kept with `enter` (k9s's and Langfuse's list
/// filters): every term must hold.
///
/// - `errors` (or `errors>0`), `steps>5`, `spans<=10`, `tokens>=1000`, `cost>0.01`,
///   `duration>2s` (`ms`, `s`, `m`): a number compared with `<`, `<=`, `>`, `>=` or `=`;
/// - `format:inspect`, `name:shock`: a field containing the text;
/// - any other word: in the name, the format or the file's trace id.
package struct TraceFilter: Hashable, Sendable {
    package let text: String
    private let terms: [Term]

    enum Term: Hashable, Sendable {
        case compare(field: String, operator: String, value: Double)
        case contains(field: String?, text: String)
    }

    package init(_ text: String) {
        self.text = text
        terms = text.split(separator: " ").map { Self.term(String($0)) }
    }

    static let numericFields: Set<String> = ["errors", "steps", "spans", "tokens", "cost", "duration"]

    private static func term(_ word: String) -> Term {
        let lower = word.lowercased()
        if lower == "errors" || lower == "error" { return .compare(field: "errors", operator: ">", value: 0) }
        for op in ["<=", ">=", "<", ">", "="] {
            guard let range = lower.range(of: op) else { continue }
            let field = String(lower[..<range.lowerBound])
            guard numericFields.contains(field), let value = number(String(lower[range.upperBound...]), field: field)
            else { break }
            return .compare(field: field, operator: op, value: value)
        }
        if let colon = lower.firstIndex(of: ":"), colon != lower.startIndex {
            return .contains(field: String(lower[..<colon]), text: String(lower[lower.index(after: colon)...]))
        }
        return .contains(field: nil, text: lower)
    }

    /// `2s`, `150ms`, `1.5m` for durations (as seconds); plain numbers otherwise.
    private static func number(_ text: String, field: String) -> Double? {
        guard field == "duration" else { return Double(text) }
        for (suffix, scale) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return Double(text)
    }

    /// True when `trace` satisfies every term.
    package func matches(_ trace: TraceSummary) -> Bool {
        terms.allSatisfy { term in
            switch term {
            case .compare(let field, let op, let value):
                let actual: Double? =
                    switch field {
                    case "errors": Double(trace.errorCount)
                    case "steps": Double(trace.stepCount)
                    case "spans": Double(trace.spanCount)
                    case "tokens":
                        trace.inputTokens == nil && trace.outputTokens == nil
                            ? nil : Double((trace.inputTokens ?? 0) + (trace.outputTokens ?? 0))
                    case "cost": trace.cost
                    default: trace.timed ? Double(trace.durationNs) / 1e9 : nil
                    }
                guard let actual else { return false }
                switch op {
                case "<": return actual < value
                case "<=": return actual <= value
                case ">": return actual > value
                case ">=": return actual >= value
                default: return actual == value
                }
            case .contains(let field, let text):
                let haystack: String =
                    switch field {
                    case "name": trace.name
                    case "format": trace.format
                    case "id": trace.externalID
                    default: "\(trace.name) \(trace.format) \(trace.externalID)"
                    }
                return TextSearch.containsIgnoringCase(haystack, text)
            }
        }
    }
}
