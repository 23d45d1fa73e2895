/// Splits a command line into words the way a POSIX shell would for simple input: spaces
/// separate words, single quotes keep everything literal, double quotes keep spaces and allow
/// `\"` and `\\`, a backslash outside quotes escapes the next character.
package enum CommandLineSplitter {
    /// A line that cannot be split.
    package struct SplitError: Error, Hashable, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    package static func split(_ line: String) throws(SplitError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaping = false
        for character in line {
            if escaping {
                current.append(character)
                escaping = false
                inWord = true
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                current.append(character)
            case ("\"", "\\"):
                escaping = true
            case ("\"", _):
                current.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, "\\"):
                escaping = true
            case (nil, " "), (nil, "\t"):
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if let quote {
            throw SplitError(message: "unterminated \(quote == "'" ? "single" : "double") quote in: \(line)")
        }
        if escaping { throw SplitError(message: "the line ends with a lone backslash") }
        if inWord { words.append(current) }
        return words
    }
}
