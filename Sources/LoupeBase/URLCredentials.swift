/// Finds the secrets in a URL as a person typed it, by taking the URL apart rather than matching
/// a pattern, so that a URL that does not parse still hides its password.
///
/// People type raw `@`, `/`, `#`, `?` and spaces in passwords, so the userinfo is everything
/// between `scheme://` and the *last* `@` of the URL, and its password everything after the
/// userinfo's first `:`. Query parameters that carry a secret (libpq's `password` and
/// `sslpassword`, and any name with `password`, `secret`, `token` or `key` in it) are secret to
/// the next `&` or the end of the URL. Where these rules and a URL disagree (an `@` in a query
/// value), more is hidden, never less.
package enum URLCredentials {
    /// A URL's userinfo, split as libpq splits it: the user before the first `:`, the password
    /// after it, both still %-encoded.
    package struct Userinfo: Hashable, Sendable {
        /// The user as typed (%-encoded); may be empty.
        package var user: Substring
        /// The password as typed (%-encoded); nil when the userinfo has no `:`.
        package var password: Substring?
    }

    /// `url` split into its scheme with `://`, its userinfo (nil when there is no `@`) and what
    /// follows the userinfo's `@` (host, port, path, query); nil when `url` does not start with
    /// `scheme://`.
    package static func split(_ url: Substring) -> (scheme: Substring, userinfo: Userinfo?, rest: Substring)? {
        guard let afterScheme = schemeEnd(url, from: url.startIndex) else { return nil }
        let authority = url[afterScheme...]
        guard let at = authority.lastIndex(of: "@") else { return (url[..<afterScheme], nil, authority) }
        let text = authority[..<at]
        let userinfo =
            if let colon = text.firstIndex(of: ":") {
                Userinfo(user: text[..<colon], password: text[text.index(after: colon)...])
            } else {
                Userinfo(user: text, password: nil)
            }
        return (url[..<afterScheme], userinfo, authority[authority.index(after: at)...])
    }

    /// The ranges of `url` that are secret: the password and the values of secret query
    /// parameters, merged and in order. `url` must start with `scheme://`; nothing is secret
    /// otherwise.
    package static func secretRanges(in url: Substring) -> [Range<String.Index>] {
        guard let parts = split(url) else { return [] }
        var ranges: [Range<String.Index>] = []
        if let password = parts.userinfo?.password { ranges.append(password.startIndex..<password.endIndex) }
        let afterScheme = parts.scheme.endIndex
        var index = afterScheme
        while index < url.endIndex {
            let character = url[index]
            index = url.index(after: index)
            guard character == "?" || character == "&" else { continue }
            guard let equals = url[index...].firstIndex(where: { "=&?#".contains($0) }), url[equals] == "=",
                isSecretName(url[index..<equals])
            else { continue }
            let valueStart = url.index(after: equals)
            let valueEnd = url[valueStart...].firstIndex(of: "&") ?? url.endIndex
            ranges.append(valueStart..<valueEnd)
        }
        return merged(ranges)
    }

    /// `url` (the whole string one URL) with its secrets replaced by `placeholder`.
    package static func redacted(_ url: String, placeholder: String) -> String {
        replacing(secretRanges(in: url[...]), in: url, with: placeholder)
    }

    /// `line` with the secrets of every URL in it replaced by `placeholder`, its words found as a
    /// shell finds them: a quoted URL keeps its spaces, so a password with spaces is hidden whole.
    package static func redactingURLs(inCommandLine line: String, placeholder: String) -> String {
        var ranges: [Range<String.Index>] = []
        for word in words(of: line) {
            guard let start = urlStart(in: word) else { continue }
            var url = word[start...]
            // The closing quote of a quoted word is not part of its URL.
            if let last = url.last, last == "'" || last == "\"", word[..<start].contains(last) {
                url = url.dropLast()
            }
            ranges += secretRanges(in: url)
        }
        return replacing(merged(ranges), in: line, with: placeholder)
    }

    /// `text` with the secrets of every URL in it replaced by `placeholder`, for a message whose
    /// URLs end at whitespace. Redact a URL known to hold spaces with ``redacted(_:placeholder:)``
    /// before putting it in a message.
    package static func redactingURLs(inText text: String, placeholder: String) -> String {
        var ranges: [Range<String.Index>] = []
        var wordStart: String.Index?
        var index = text.startIndex
        while true {
            let atEnd = index == text.endIndex
            if atEnd || text[index].isWhitespace {
                if let start = wordStart, let urlStart = urlStart(in: text[start..<index]) {
                    ranges += secretRanges(in: text[urlStart..<index])
                }
                wordStart = nil
                if atEnd { break }
            } else if wordStart == nil {
                wordStart = index
            }
            index = text.index(after: index)
        }
        return replacing(merged(ranges), in: text, with: placeholder)
    }

    // MARK: - Parts

    private static func isSecretName(_ name: Substring) -> Bool {
        let name = name.lowercased()
        return ["password", "secret", "token", "key"].contains { name.contains($0) }
    }

    /// The index after `scheme://` when `text` has one starting at `start`.
    private static func schemeEnd(_ text: Substring, from start: String.Index) -> String.Index? {
        guard start < text.endIndex, text[start].isASCII, text[start].isLetter else { return nil }
        var index = start
        while index < text.endIndex, isSchemeCharacter(text[index]) { index = text.index(after: index) }
        guard text[index...].hasPrefix("://") else { return nil }
        return text.index(index, offsetBy: 3)
    }

    private static func isSchemeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+.-".contains(character))
    }

    /// Where the first `scheme://` in `word` starts.
    private static func urlStart(in word: Substring) -> String.Index? {
        var search = word.startIndex
        while let separator = word[search...].firstRange(of: "://") {
            var start = separator.lowerBound
            while start > word.startIndex, isSchemeCharacter(word[word.index(before: start)]) {
                start = word.index(before: start)
            }
            // The scheme begins at its first letter (`--workspace=postgres://`, `'http://`).
            while start < separator.lowerBound, !(word[start].isASCII && word[start].isLetter) {
                start = word.index(after: start)
            }
            if start < separator.lowerBound, schemeEnd(word, from: start) != nil { return start }
            search = separator.upperBound
        }
        return nil
    }

    /// The words of a command line as ranges that include their quotes: spaces separate words
    /// outside quotes; a backslash outside single quotes escapes the next character. An
    /// unterminated quote runs to the end of the line.
    private static func words(of line: String) -> [Substring] {
        var words: [Substring] = []
        var start: String.Index?
        var quote: Character?
        var escaping = false
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if start == nil, !character.isWhitespace { start = index }
            if escaping {
                escaping = false
            } else if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\", open == "\"" {
                    escaping = true
                }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "\\" {
                escaping = true
            } else if character.isWhitespace, let begun = start {
                words.append(line[begun..<index])
                start = nil
            }
            index = line.index(after: index)
        }
        if let start { words.append(line[start...]) }
        return words
    }

    private static func merged(_ ranges: [Range<String.Index>]) -> [Range<String.Index>] {
        var out: [Range<String.Index>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }

    private static func replacing(_ ranges: [Range<String.Index>], in text: String, with placeholder: String)
        -> String
    {
        guard !ranges.isEmpty else { return text }
        var out = ""
        var index = text.startIndex
        for range in ranges {
            out += text[index..<range.lowerBound]
            out += placeholder
            index = range.upperBound
        }
        out += text[index...]
        return out
    }
}
