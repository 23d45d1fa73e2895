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
    ///
    /// An `@` in a query value (`?application_name=me@work`, `?password=p@ss`) does not end the
    /// userinfo: once the URL has a query that starts with a parameter libpq knows
    /// (``queryStart(_:)``), the userinfo ends at the last `@` before it.
    package static func split(_ url: Substring) -> (scheme: Substring, userinfo: Userinfo?, rest: Substring)? {
        guard let afterScheme = schemeEnd(url, from: url.startIndex) else { return nil }
        let authority = url[afterScheme...]
        let searched = queryStart(authority).map { authority[..<$0] } ?? authority
        guard let at = searched.lastIndex(of: "@") else { return (url[..<afterScheme], nil, authority) }
        let text = authority[..<at]
        let userinfo =
            if let colon = text.firstIndex(of: ":") {
                Userinfo(user: text[..<colon], password: text[text.index(after: colon)...])
            } else {
                Userinfo(user: text, password: nil)
            }
        return (url[..<afterScheme], userinfo, authority[authority.index(after: at)...])
    }

    /// The parameters libpq takes in a URL's query (those a password is least likely to hold
    /// after a `?`): where one follows a `?`, the query starts.
    private static let queryParameters = [
        "sslmode", "password", "sslpassword", "application_name", "connect_timeout", "options", "user", "host",
        "port", "dbname", "target_session_attrs", "sslrootcert", "sslcert", "sslkey", "passfile",
    ]

    /// Where the query of a URL's part after `scheme://` starts: the first `?` followed by a
    /// parameter libpq knows and `=`. Nil when there is none (a `?` may be a password's).
    package static func queryStart(_ authority: Substring) -> String.Index? {
        var search = authority.startIndex
        while let mark = authority[search...].firstIndex(of: "?") {
            let after = authority[authority.index(after: mark)...]
            if queryParameters.contains(where: { after.hasPrefix($0 + "=") }) { return mark }
            search = authority.index(after: mark)
        }
        return nil
    }

    /// A URL with no `@` whose authority has a `:` followed by what is no port (`postgres://ana:pa`,
    /// the rest of the password cut off at a space): the range after the `:`, which is most
    /// likely part of a password. Nil for a URL with a userinfo or a numeric port.
    package static func cutPassword(in url: Substring) -> Range<String.Index>? {
        guard let parts = split(url), parts.userinfo == nil else { return nil }
        let authority = parts.rest
        guard !authority.hasPrefix("[") else { return nil }
        let end = authority.firstIndex { "/?#".contains($0) } ?? authority.endIndex
        guard let colon = authority[..<end].firstIndex(of: ":") else { return nil }
        let after = authority[authority.index(after: colon)..<end]
        guard !after.isEmpty, !after.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return after.startIndex..<end
    }

    /// The ranges of `url` that are secret: the password and the values of secret query
    /// parameters, merged and in order. `url` must start with `scheme://`; nothing is secret
    /// otherwise. A URL that looks cut at a password's space (``cutPassword(in:)``) has its
    /// would-be port hidden.
    package static func secretRanges(in url: Substring) -> [Range<String.Index>] {
        guard let parts = split(url) else { return [] }
        var ranges: [Range<String.Index>] = []
        if let password = parts.userinfo?.password { ranges.append(password.startIndex..<password.endIndex) }
        if let cut = cutPassword(in: url) { ranges.append(cut) }
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
            let valueEnd = secretValueEnd(url, from: valueStart)
            ranges.append(valueStart..<valueEnd)
            index = valueEnd
        }
        return merged(ranges)
    }

    /// `url` (the whole string one URL) with its secrets replaced by `placeholder`.
    package static func redacted(_ url: String, placeholder: String) -> String {
        replacing(secretRanges(in: url[...]), in: url, with: placeholder)
    }

    /// `line` with the secrets of every URL in it replaced by `placeholder`, its words found as a
    /// shell finds them: a quoted URL keeps its spaces, so a password with spaces is hidden whole.
    ///
    /// An unquoted password with a space splits its URL in two words (`postgres://ana:pa` and
    /// `ss@host/db`): the first's would-be port is hidden (``cutPassword(in:)``) and, when a later
    /// word has an `@`, every word up to it and that word's text before its `@`.
    package static func redactingURLs(inCommandLine line: String, placeholder: String) -> String {
        var ranges: [Range<String.Index>] = []
        let all = words(of: line)
        for (index, word) in all.enumerated() {
            guard let start = urlStart(in: word) else { continue }
            var url = word[start...]
            // The closing quote of a quoted word is not part of its URL.
            if let last = url.last, last == "'" || last == "\"", word[..<start].contains(last) {
                url = url.dropLast()
            }
            ranges += secretRanges(in: url)
            guard let cut = cutPassword(in: url),
                let end = all[(index + 1)...].firstIndex(where: { $0.contains("@") })
            else { continue }
            ranges.append(cut.lowerBound..<all[end].firstIndex(of: "@")!)
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

    /// Where a secret query value starting at `start` ends: at the next `&` that starts a
    /// `name=` pair, else the end. A raw `&` in a password (`?password=a&b`) is taken as part of
    /// it: more is hidden, never less.
    private static func secretValueEnd(_ url: Substring, from start: String.Index) -> String.Index {
        var search = start
        while let amp = url[search...].firstIndex(of: "&") {
            let name = url[url.index(after: amp)...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty, url[name.endIndex...].hasPrefix("=") { return amp }
            search = url.index(after: amp)
        }
        return url.endIndex
    }

    /// Whether a command line's words hold a URL cut at a space in its password
    /// (`postgres://ana:pa ss@host/db` unquoted): one whose would-be port is no port
    /// (``cutPassword(in:)``), followed by a word with an `@`.
    package static func hasURLCutAtSpace(_ words: [String]) -> Bool {
        for (index, word) in words.enumerated() {
            guard let start = urlStart(in: word[...]), cutPassword(in: word[start...]) != nil else { continue }
            if words[(index + 1)...].contains(where: { $0.contains("@") }) { return true }
        }
        return false
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
