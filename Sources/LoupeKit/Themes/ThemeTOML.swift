/// The part of TOML 1.0 that theme files use, read in Swift.
///
/// Themes were read with TOMLKit, whose parser (toml++) asserts instead of throwing on some
/// malformed input (`[#`, `[ ]`, a combining mark after `[`…), which aborts the whole program;
/// `scripts/fuzz` kept finding one more such input every few minutes. A theme needs little of
/// TOML, so this reader takes that part and refuses the rest in words:
///
/// - comments, blank lines, `\n` or `\r\n` line ends;
/// - bare, quoted and dotted keys; `[table]` headers;
/// - basic strings with escapes, literal strings, `true`/`false`, arrays (over several lines,
///   with comments and a trailing comma) and one-line inline tables.
///
/// Numbers, dates, multi-line strings and arrays of tables are not used by themes and are
/// refused with a message that says so. Every error carries its 1-based line.
package enum ThemeTOML {
    package indirect enum Value: Equatable, Sendable {
        case string(String)
        case bool(Bool)
        case array([Value])
        case table(Table)

        package var string: String? { if case .string(let text) = self { text } else { nil } }
        package var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
        package var array: [Value]? { if case .array(let values) = self { values } else { nil } }
        package var table: Table? { if case .table(let table) = self { table } else { nil } }
    }

    /// A table's keys in the order they were written, each with its value and line.
    package struct Table: Equatable, Sendable {
        package private(set) var keys: [String] = []
        private var entries: [String: (value: Value, line: Int)] = [:]

        package init() {}

        package subscript(key: String) -> Value? { entries[key]?.value }

        /// The line where `key` was given.
        package func line(of key: String) -> Int? { entries[key]?.line }

        fileprivate mutating func set(_ key: String, _ value: Value, line: Int) {
            if entries[key] == nil { keys.append(key) }
            entries[key] = (value, line)
        }

        package static func == (lhs: Table, rhs: Table) -> Bool {
            lhs.keys == rhs.keys && lhs.keys.allSatisfy { lhs[$0] == rhs[$0] }
        }
    }

    package struct SyntaxError: Error, Equatable, Sendable {
        package var line: Int
        package var message: String
    }

    /// Parses a whole document.
    package static func parse(_ text: String) throws(SyntaxError) -> Table {
        var parser = Parser(text)
        return try parser.document()
    }
}

extension ThemeTOML {
    /// A recursive-descent parser over Unicode scalars (a combining mark or `\r\n` would hide a
    /// delimiter inside one Swift Character).
    private struct Parser {
        /// Arrays and inline tables nest at most this deep, so no input can exhaust the stack.
        static let maximumDepth = 32

        let scalars: [Unicode.Scalar]
        var index = 0
        var line = 1
        var root = Table()
        /// Tables a `[header]` defined, so a second `[same]` is an error as TOML says.
        var headers = Set<[String]>()

        init(_ text: String) {
            scalars = Array(text.unicodeScalars)
            if scalars.first == "\u{FEFF}" { index = 1 }
        }

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        func peek(_ offset: Int) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        func error(_ message: String) -> SyntaxError { SyntaxError(line: line, message: message) }

        // MARK: Document

        mutating func document() throws(SyntaxError) -> Table {
            var table: [String] = []
            while true {
                try skipBlankLinesAndComments()
                guard let scalar = current else { return root }
                if scalar == "[" {
                    table = try header()
                } else {
                    let keyLine = line
                    let key = try dottedKey()
                    try expect("=", "expected '=' after the key '\(key.joined(separator: "."))'")
                    skipSpaces()
                    let value = try self.value(depth: 0)
                    try insert(value, at: table + key, line: keyLine)
                }
                try endOfLine()
            }
        }

        mutating func header() throws(SyntaxError) -> [String] {
            index += 1
            if current == "[" {
                index += 1
                _ = try headerName()
                throw error("arrays of tables ([[…]]) are not used in theme files")
            }
            let name = try headerName()
            try expect("]", "expected ']' to close the table header")
            guard headers.insert(name).inserted else {
                throw error("the table [\(name.joined(separator: "."))] is defined twice")
            }
            var table = root
            try Self.ensureTable(at: name[...], in: &table, line: line)
            root = table
            return name
        }

        mutating func headerName() throws(SyntaxError) -> [String] {
            skipSpaces()
            guard let first = current, Self.isBareKey(first) || first == "\"" || first == "'" else {
                throw error("a table header needs a name after '['")
            }
            return try dottedKey()
        }

        /// Creates the tables along `path` (keeping those there) or says which key is a value.
        static func ensureTable(at path: ArraySlice<String>, in table: inout Table, line: Int) throws(SyntaxError) {
            guard let key = path.first else { return }
            var child = try subtable(key, of: table, line: line)
            try ensureTable(at: path.dropFirst(), in: &child, line: line)
            table.set(key, .table(child), line: table.line(of: key) ?? line)
        }

        /// The table under `key`, new when there is none; an error when `key` holds a value.
        static func subtable(_ key: String, of table: Table, line: Int) throws(SyntaxError) -> Table {
            switch table[key] {
            case nil: return Table()
            case .table(let existing): return existing
            case .some:
                throw SyntaxError(
                    line: line,
                    message: "'\(key)' already holds a value (line \(table.line(of: key) ?? line)), not a table")
            }
        }

        mutating func insert(_ value: Value, at path: [String], line: Int) throws(SyntaxError) {
            var table = root
            try Self.insert(value, at: path[...], in: &table, line: line)
            root = table
        }

        static func insert(
            _ value: Value, at path: ArraySlice<String>, in table: inout Table, line: Int
        ) throws(SyntaxError) {
            guard let key = path.first else { return }
            if path.count == 1 {
                if let first = table.line(of: key) {
                    throw SyntaxError(line: line, message: "the key '\(key)' is defined twice (first on line \(first))")
                }
                table.set(key, value, line: line)
                return
            }
            var child = try subtable(key, of: table, line: line)
            try insert(value, at: path.dropFirst(), in: &child, line: line)
            table.set(key, .table(child), line: table.line(of: key) ?? line)
        }

        // MARK: Keys

        static func isBareKey(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
            default: false
            }
        }

        mutating func dottedKey() throws(SyntaxError) -> [String] {
            var parts = [try simpleKey()]
            while true {
                skipSpaces()
                guard current == "." else { return parts }
                index += 1
                skipSpaces()
                parts.append(try simpleKey())
            }
        }

        mutating func simpleKey() throws(SyntaxError) -> String {
            switch current {
            case "\"": return try basicString()
            case "'": return try literalString()
            case let scalar? where Self.isBareKey(scalar):
                let start = index
                while let next = current, Self.isBareKey(next) { index += 1 }
                return String(String.UnicodeScalarView(scalars[start..<index]))
            default:
                throw error("expected a key (letters, digits, '_', '-', or a quoted name)\(found)")
            }
        }

        // MARK: Values

        mutating func value(depth: Int) throws(SyntaxError) -> Value {
            guard depth < Self.maximumDepth else {
                throw error("arrays or inline tables nest deeper than \(Self.maximumDepth) levels")
            }
            switch current {
            case "\"": return .string(try basicString())
            case "'": return .string(try literalString())
            case "[": return try array(depth: depth)
            case "{": return try inlineTable(depth: depth)
            case "t", "f":
                for (word, flag) in [("true", true), ("false", false)] where matches(word) {
                    index += word.unicodeScalars.count
                    return .bool(flag)
                }
                throw error("expected a value: a \"string\", true, false, an [array] or an {inline table}")
            case let scalar? where ("0"..."9").contains(scalar) || "+-in".unicodeScalars.contains(scalar):
                throw error("numbers and dates are not used in theme files (a colour is written \"#rrggbb\")")
            default:
                throw error("expected a value: a \"string\", true, false, an [array] or an {inline table}\(found)")
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var values: [Value] = []
            while true {
                try skipBlankLinesAndComments()
                if current == "]" {
                    index += 1
                    return .array(values)
                }
                values.append(try value(depth: depth + 1))
                try skipBlankLinesAndComments()
                switch current {
                case ",": index += 1
                case "]": break
                case nil: throw error("the array is not closed with ']'")
                default: throw error("expected ',' or ']' in the array\(found)")
                }
            }
        }

        mutating func inlineTable(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var table = Table()
            skipSpaces()
            if current == "}" {
                index += 1
                return .table(table)
            }
            while true {
                skipSpaces()
                let key = try dottedKey()
                try expect("=", "expected '=' after the key '\(key.joined(separator: "."))'")
                skipSpaces()
                try Self.insert(try value(depth: depth + 1), at: key[...], in: &table, line: line)
                skipSpaces()
                switch current {
                case ",": index += 1
                case "}":
                    index += 1
                    return .table(table)
                default: throw error("expected ',' or '}' in the inline table (it stays on one line)\(found)")
                }
            }
        }

        mutating func basicString() throws(SyntaxError) -> String {
            if peek(1) == "\"" && peek(2) == "\"" {
                throw error("multi-line strings (\"\"\"…\"\"\") are not used in theme files")
            }
            index += 1
            var text = String.UnicodeScalarView()
            while true {
                guard let scalar = current else { throw error("the string is not closed with '\"'") }
                index += 1
                switch scalar {
                case "\"": return String(text)
                case "\\": text.append(try escape())
                default:
                    try checkStringScalar(scalar)
                    text.append(scalar)
                }
            }
        }

        mutating func literalString() throws(SyntaxError) -> String {
            if peek(1) == "'" && peek(2) == "'" {
                throw error("multi-line strings ('''…''') are not used in theme files")
            }
            index += 1
            var text = String.UnicodeScalarView()
            while true {
                guard let scalar = current else { throw error("the string is not closed with \"'\"") }
                index += 1
                if scalar == "'" { return String(text) }
                try checkStringScalar(scalar)
                text.append(scalar)
            }
        }

        func checkStringScalar(_ scalar: Unicode.Scalar) throws(SyntaxError) {
            if scalar == "\n" || scalar == "\r" { throw error("the string is not closed on its line") }
            if isControl(scalar) {
                throw error("a control character (U+\(hex(scalar.value, digits: 4))) inside a string; use an escape")
            }
        }

        mutating func escape() throws(SyntaxError) -> Unicode.Scalar {
            guard let scalar = current else { throw error("the string is not closed with '\"'") }
            index += 1
            switch scalar {
            case "b": return "\u{08}"
            case "t": return "\t"
            case "n": return "\n"
            case "f": return "\u{0C}"
            case "r": return "\r"
            case "\"": return "\""
            case "\\": return "\\"
            case "u", "U":
                let digits = scalar == "u" ? 4 : 8
                var value: UInt32 = 0
                for _ in 0..<digits {
                    guard let digit = current, let nibble = hexValue(digit) else {
                        throw error("'\\\(scalar)' needs \(digits) hexadecimal digits")
                    }
                    value = value << 4 | nibble
                    index += 1
                }
                guard let result = Unicode.Scalar(value) else {
                    throw error("'\\\(scalar)\(hex(value, digits: digits))' is not a Unicode scalar value")
                }
                return result
            default:
                let shown = scalar.escaped(asASCII: true)
                throw error("unknown escape '\\\(shown)' (TOML knows \\b \\t \\n \\f \\r \\\" \\\\ \\u \\U)")
            }
        }

        // MARK: Layout

        mutating func skipSpaces() {
            while current == " " || current == "\t" { index += 1 }
        }

        /// Skips spaces, comments and line ends (counting lines).
        mutating func skipBlankLinesAndComments() throws(SyntaxError) {
            while let scalar = current {
                switch scalar {
                case " ", "\t": index += 1
                case "#": try comment()
                case "\n", "\r": try newline()
                default: return
                }
            }
        }

        mutating func comment() throws(SyntaxError) {
            while let scalar = current, scalar != "\n", scalar != "\r" {
                if isControl(scalar) {
                    throw error("a control character (U+\(hex(scalar.value, digits: 4))) inside a comment")
                }
                index += 1
            }
        }

        mutating func newline() throws(SyntaxError) {
            if current == "\r" {
                guard peek(1) == "\n" else { throw error("a carriage return without a line feed after it") }
                index += 1
            }
            index += 1
            line += 1
        }

        /// After a key/value pair or a header: spaces, maybe a comment, then the line ends.
        mutating func endOfLine() throws(SyntaxError) {
            skipSpaces()
            if current == "#" { try comment() }
            guard current != nil else { return }
            guard current == "\n" || current == "\r" else {
                throw error("expected the end of the line\(found)")
            }
            try newline()
        }

        mutating func expect(_ scalar: Unicode.Scalar, _ message: String) throws(SyntaxError) {
            skipSpaces()
            guard current == scalar else { throw error(message + found) }
            index += 1
        }

        func matches(_ word: String) -> Bool {
            word.unicodeScalars.enumerated().allSatisfy { peek($0.offset) == $0.element }
        }

        /// ", found 'x'" for the scalar at the cursor, escaped so it is safe to print.
        var found: String {
            guard let scalar = current else { return ", found the end of the file" }
            if scalar == "\n" || scalar == "\r" { return ", found the end of the line" }
            return ", found '\(scalar.escaped(asASCII: true))'"
        }
    }
}

/// TOML allows no control character but tab in strings and comments.
private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F
}

private func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
    switch scalar {
    case "0"..."9": scalar.value - 0x30
    case "a"..."f": scalar.value - 0x61 + 10
    case "A"..."F": scalar.value - 0x41 + 10
    default: nil
    }
}

private func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
