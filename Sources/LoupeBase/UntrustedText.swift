/// Makes text that came from outside (traces, documents, model output, file names) safe to draw.
///
/// Control characters and escape sequences never reach the terminal: C0 controls become the
/// visible Control Pictures (`ESC` shows as `␛`), `DEL` as `␡`, C1 controls and bidirectional
/// overrides as `�`. The sequence `ESC [ 2 J` therefore shows as `␛[2J` instead of clearing the
/// screen.
package enum UntrustedText {
    /// One line of display text: every control character, newlines and tabs included, is made
    /// visible.
    package static func sanitized(_ text: some StringProtocol) -> String {
        var needsWork = false
        for scalar in text.unicodeScalars where replacement(for: scalar) != nil {
            needsWork = true
            break
        }
        guard needsWork else { return String(text) }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let visible = replacement(for: scalar) {
                result.append(visible)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Display lines of a multi-line text: split on `\n` (a `\r\n` pair counts as one), tabs
    /// expanded to the next multiple of `tabWidth`, every other control character made visible.
    package static func lines(_ text: some StringProtocol, tabWidth: Int = 4) -> [String] {
        var lines: [String] = []
        // "\r\n" is one Character in Swift, so split on both forms of a line end.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine[...]
            if line.contains("\t") {
                var expanded = ""
                var column = 0
                for character in line {
                    if character == "\t" {
                        let spaces = tabWidth - column % tabWidth
                        expanded += String(repeating: " ", count: spaces)
                        column += spaces
                    } else {
                        expanded.append(character)
                        column += TextWidth.of(character)
                    }
                }
                lines.append(sanitized(expanded))
                continue
            }
            lines.append(sanitized(line))
        }
        return lines
    }

    /// The visible stand-in for a scalar that must not reach the terminal, or nil when it is safe.
    static func replacement(for scalar: Unicode.Scalar) -> Unicode.Scalar? {
        let value = scalar.value
        switch value {
        case 0x00..<0x20: return Unicode.Scalar(0x2400 + value)
        case 0x7F: return "\u{2421}"
        case 0x80..<0xA0: return "\u{FFFD}"
        case 0x202A...0x202E, 0x2066...0x2069: return "\u{FFFD}"
        default: return nil
        }
    }
}
