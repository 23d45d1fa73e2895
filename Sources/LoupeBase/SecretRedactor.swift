import Foundation

/// Replaces secrets with `[redacted]` in text Loupe stores or prints: the values it knows
/// (an API key it read), and credential-shaped parts of a typed command line (URL userinfo,
/// `sk-…` keys, `Bearer …`/`Basic …` credentials, `--api-key VALUE`, `--header Name=value`,
/// `key=…` query parameters).
///
/// Workspaces are meant to be copied and shared, so nothing secret may reach them.
package struct SecretRedactor: Sendable {
    /// What a secret is replaced with.
    package static let placeholder = "[redacted]"

    /// Values replaced wherever they occur; values shorter than 4 characters are ignored
    /// (they would redact ordinary words).
    package var secrets: [String]

    package init(secrets: [String?]) {
        self.secrets = secrets.compactMap { $0 }.filter { $0.count >= 4 }
    }

    /// `text` with every known secret replaced.
    package func redact(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: Self.placeholder) }
    }

    /// `line` with known secrets and credential-shaped parts replaced: for command history,
    /// where what was typed is not known to be a secret. URLs are taken apart
    /// (``URLCredentials``), so a password with `/`, `@`, `#` or quoted spaces is hidden whole.
    package func redactCredentials(in line: String) -> String {
        let line = URLCredentials.redactingURLs(inCommandLine: redact(line), placeholder: Self.placeholder)
        return Self.credentialPatterns.reduce(line) { text, pattern in
            pattern.regex.stringByReplacingMatches(
                in: text, range: NSRange(text.startIndex..., in: text), withTemplate: pattern.template)
        }
    }

    private struct Pattern: @unchecked Sendable {
        // NSRegularExpression is immutable once made and documented as thread-safe.
        var regex: NSRegularExpression
        var template: String

        init(_ pattern: String, _ template: String) {
            // swift-format-ignore: NeverUseForceTry
            regex = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            self.template = template
        }
    }

    private static let credentialPatterns: [Pattern] = [
        Pattern(#"(\bbearer\s+)[^\s"']+"#, "$1[redacted]"),
        Pattern(#"(authorization\s*[=:]\s*basic\s+)[^\s"']+"#, "$1[redacted]"),
        // --header 'Name=value…' / --header Name=value: a header sent on may carry a key.
        Pattern(#"(--header(?:=|\s+)(["'])[^"'=:]+[=:])[^"']*(?=\2)"#, "$1[redacted]"),
        Pattern(#"(--header(?:=|\s+)[^\s"'=:]+[=:])[^\s"']+"#, "$1[redacted]"),
        Pattern(#"(--[a-z0-9-]*(?:key|token|secret|password)[a-z0-9-]*(?:=|\s+))[^\s"']+"#, "$1[redacted]"),
        Pattern(#"([?&](?:api[_-]?)?(?:key|token|secret|password)=)[^&\s"']+"#, "$1[redacted]"),
        Pattern(#"\b(?:sk|pk|rk)-[a-z0-9_-]{8,}"#, "[redacted]"),
    ]
}
