import Foundation
import LoupeBase

/// Recorded text (span content, answers, names) fenced for an agent: inside a block that says
/// it is data, with anything that could close the fence or drive a terminal made visible.
///
/// Models follow instructions wherever they read them; a trace whose tool result says "ignore
/// previous instructions" must reach the agent as a quotation, not as words from Loupe.
package enum UntrustedFence {
    static let open = "<untrusted-data>"
    static let close = "</untrusted-data>"

    /// `text` inside the fence, each line with its control characters made visible.
    package static func fenced(_ text: String) -> String {
        open + "\n" + lines(text).joined(separator: "\n") + "\n" + close
    }

    /// One line of recorded text for a rendering line: control characters (newlines included)
    /// made visible and fence markers defused.
    package static func inline(_ text: String, limit: Int = 120) -> String {
        let line = defused(UntrustedText.sanitized(text))
        return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }

    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { defused(UntrustedText.sanitized($0)) }
    }

    /// Breaks any fence marker inside the content so that it cannot end the block early.
    private static func defused(_ line: String) -> String {
        guard line.localizedCaseInsensitiveContains("untrusted-data") else { return line }
        return line.replacingOccurrences(of: "untrusted-data", with: "untrusted_data", options: .caseInsensitive)
    }

    /// `text` cut to `limit` characters; the flag says whether it was cut.
    static func truncated(_ text: String, limit: Int) -> (text: String, cut: Bool) {
        text.count > limit ? (String(text.prefix(limit)), true) : (text, false)
    }

    /// `text` cut to `limit` characters as a result's value: the string itself, or, when cut,
    /// `{"text": the kept part, "omitted_chars": how many were left out}`.
    static func truncatedValue(_ text: String, limit: Int) -> JSONValue {
        let (kept, wasCut) = truncated(text, limit: limit)
        return wasCut
            ? .object(["text": .string(kept), "omitted_chars": .number(Double(text.count - kept.count))])
            : .string(kept)
    }
}
