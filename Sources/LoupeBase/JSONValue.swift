import Foundation

/// A parsed JSON value. Trace files are untrusted and come in many dialects, so importers walk
/// values rather than decode fixed types, and every parse error says where it is.
package enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// An object from a dictionary's members.
    package static func object(_ members: [String: JSONValue]) -> JSONValue { .object(JSONObject(members)) }

    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    package var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// True for an array or an object (what pretty-printing lays out on several lines).
    package var isContainer: Bool {
        switch self {
        case .array, .object: return true
        default: return false
        }
    }

    package var number: Double? {
        switch self {
        case .number(let n): return n
        // OTLP writes 64-bit integers as decimal strings.
        case .string(let s): return Double(s)
        default: return nil
        }
    }

    /// An integer, from a number or a decimal string (OTLP's 64-bit encoding).
    package var int: Int64? {
        switch self {
        case .number(let n): return n.isFinite && n == n.rounded() ? Int64(exactly: n) : nil
        case .string(let s): return Int64(s)
        default: return nil
        }
    }

    package var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    package var array: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    package var object: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    package var isNull: Bool { self == .null }

    /// Text for display: a string as itself, anything else as compact JSON.
    package var text: String { string ?? compactJSON }

    /// Compact JSON with keys sorted: the same bytes for the same value.
    package var compactJSON: String {
        var out = JSONBytes()
        write(to: &out, indent: nil, level: 0)
        return out.string
    }

    /// Two-space indented JSON with keys sorted, as the trace view shows tool arguments.
    package var prettyJSON: String {
        var out = JSONBytes()
        write(to: &out, indent: 2, level: 0)
        return out.string
    }

    private static func newline(_ out: inout JSONBytes, indent: Int?, level: Int) {
        guard let indent else { return }
        out.append(0x0A)
        for _ in 0..<(indent * level) { out.append(0x20) }
    }

    /// Serialises into bytes: strings are copied a word at a time between the characters that
    /// need escaping, not character by character.
    private func write(to out: inout JSONBytes, indent: Int?, level: Int) {
        switch self {
        case .null: out.append("null")
        case .bool(let b): out.append(b ? "true" : "false")
        case .number(let n):
            if n.isFinite, n == n.rounded(), abs(n) < 1e15 {
                out.append(String(Int64(n)))
            } else if n.isFinite {
                out.append("\(n)")
            } else {
                out.append("null")
            }
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            guard !items.isEmpty else { return out.append("[]") }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent: indent, level: level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent: indent, level: level)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { return out.append("{}") }
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent: indent, level: level + 1)
                Self.quote(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(0x20) }
                member.value.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent: indent, level: level)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The length of the UTF-8 sequence at `i` when it encodes a character that can change how a
    /// terminal shows the text around it while staying invisible itself: DEL, the C1 controls,
    /// zero-width characters, the bidirectional controls (U+202E reverses a line), the line and
    /// paragraph separators, invisible operators and the BOM. Written as `\uXXXX`, which JSON
    /// reads back as the same text; 0 for anything else.
    private static func invisibleSequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        let byte = bytes[i]
        if byte == 0x7F { return 1 }
        guard i + 1 < bytes.count else { return 0 }
        let second = bytes[i + 1]
        if byte == 0xC2 { return (0x80...0x9F).contains(second) ? 2 : 0 }
        guard i + 2 < bytes.count else { return 0 }
        let third = bytes[i + 2]
        switch (byte, second) {
        case (0xE2, 0x80): return (0x8B...0x8F).contains(third) || (0xA8...0xAE).contains(third) ? 3 : 0
        case (0xE2, 0x81): return (0xA0...0xA4).contains(third) || (0xA6...0xA9).contains(third) ? 3 : 0
        case (0xEF, 0xBB): return third == 0xBF ? 3 : 0
        default: return 0
        }
    }

    /// `json` (written by another encoder, Foundation's) with the same invisible characters
    /// written as `\uXXXX`. Sound because outside strings JSON holds only ASCII.
    package static func escapingInvisibleCharacters(in json: String) -> String {
        var json = json
        return json.withUTF8 { bytes in
            var out = JSONBytes(capacity: bytes.count + 16)
            escape(bytes, into: &out, quoting: false)
            return out.string
        }
    }

    private static func quote(_ s: String, into out: inout JSONBytes) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { escape($0, into: &out, quoting: true) }
        out.append(UInt8(ascii: "\""))
    }

    /// The lanes of `word` that may need escaping, as their high bits: DEL and above (the
    /// invisible characters start with 0x7F, 0xC2, 0xE2 or 0xEF) and, when `quoting`, C0
    /// controls, quotes and backslashes. The lowest lane set is exact (a borrow only runs upward
    /// from a lane that matched), so the bytes before it are plain.
    @inline(__always)
    private static func specialLanes(_ word: UInt64, quoting: Bool) -> UInt64 {
        var special = ByteLanes.high(in: word) | ByteLanes.equal(to: 0x7F, in: word)
        if quoting {
            special |=
                ByteLanes.below(0x20, in: word) | ByteLanes.equal(to: UInt8(ascii: "\""), in: word)
                | ByteLanes.equal(to: UInt8(ascii: "\\"), in: word)
        }
        return special
    }

    /// Appends `bytes` with the invisible characters as `\uXXXX` and, when `quoting`, what JSON
    /// strings must escape (quotes, backslashes, C0 controls) escaped too.
    private static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout JSONBytes, quoting: Bool) {
        guard let start = bytes.baseAddress else { return }
        var i = 0
        while i < bytes.count {
            out.reserve(8)
            if i + 8 <= bytes.count {
                // Eight bytes at a time, stored as they are up to the first that may need an
                // escape: most text needs none.
                let word = UnsafeRawPointer(start + i).loadUnaligned(as: UInt64.self)
                let special = specialLanes(word, quoting: quoting)
                let plain = special == 0 ? 8 : special.trailingZeroBitCount / 8
                out.store(word, keeping: plain)
                i += plain
                if plain == 8 { continue }
            }
            i += escapeOne(bytes, at: i, into: &out, quoting: quoting)
        }
    }

    /// Writes the byte at `i` (or the invisible character starting there) as it must appear,
    /// and says how many bytes it took.
    @inline(__always)
    private static func escapeOne(
        _ bytes: UnsafeBufferPointer<UInt8>, at i: Int, into out: inout JSONBytes, quoting: Bool
    ) -> Int {
        let byte = bytes[i]
        out.reserve(6)
        if byte == 0x7F || byte == 0xC2 || byte == 0xE2 || byte == 0xEF,
            case let length = invisibleSequenceLength(bytes, at: i), length > 0
        {
            // One BMP scalar: its code point, written as four hex digits.
            let scalar = String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<i + length]), as: UTF8.self)
                .unicodeScalars.first!.value
            out.appendReserved(UInt8(ascii: "\\"))
            out.appendReserved(UInt8(ascii: "u"))
            for shift in stride(from: 12, through: 0, by: -4) {
                out.appendReserved(hexDigits[Int((scalar >> UInt32(shift)) & 0xF)])
            }
            return length
        }
        guard quoting, byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
            out.appendReserved(byte)
            return 1
        }
        out.appendReserved(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): out.appendReserved(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.appendReserved(UInt8(ascii: "\\"))
        case 0x0A: out.appendReserved(UInt8(ascii: "n"))
        case 0x0D: out.appendReserved(UInt8(ascii: "r"))
        case 0x09: out.appendReserved(UInt8(ascii: "t"))
        default:
            out.appendReserved(UInt8(ascii: "u"))
            out.appendReserved(UInt8(ascii: "0"))
            out.appendReserved(UInt8(ascii: "0"))
            out.appendReserved(hexDigits[Int(byte >> 4)])
            out.appendReserved(hexDigits[Int(byte & 0xF)])
        }
        return 1
    }
}

extension JSONValue {
    /// Parses one JSON document (RFC 8259; surrounding whitespace allowed).
    package static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<JSONValue, JSONSyntaxError> in
            parse(bytes: raw.bindMemory(to: UInt8.self))
        }
        return try result.get()
    }

    /// Parses one JSON document from bytes in memory (a line of a larger buffer, say).
    package static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONSyntaxError> {
        var parser = JSONParser(bytes)
        do {
            return .success(try parser.document())
        } catch {
            return .failure(error)
        }
    }

    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Data(text.utf8))
    }
}

/// A recursive-descent parser over bytes; strings are decoded from UTF-8 slices without
/// intermediate copies where they hold no escapes.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    func error(_ message: String) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        for i in 0..<min(position, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        // Columns count characters, not bytes.
        let column =
            String(
                decoding: UnsafeBufferPointer(rebasing: bytes[lineStart..<min(position, bytes.count)]), as: UTF8.self
            )
            .count + 1
        return JSONSyntaxError(message: message, line: line, column: column)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a value")
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("expected \(word)") }
        for i in 0..<count where bytes[position + i] != word.utf8Start[i] { throw error("expected \(word)") }
        position += count
        return value
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > 512 { throw error("nested more than 512 levels deep") }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1
        var members: [JSONObject.Element] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a member name in quotes")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("expected ':' after \"\(key)\"")
            }
            position += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "}") else { throw error("expected ',' or '}' in an object") }
            position += 1
            return .object(JSONObject(parsed: members))
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "]") else { throw error("expected ',' or ']' in an array") }
            position += 1
            return .array(items)
        }
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits(_ p: inout Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            let s = p
            while p < bytes.count, bytes[p] >= 0x30, bytes[p] <= 0x39 { p += 1 }
            return p - s
        }
        guard digits(&position, bytes) > 0 else { throw error("expected digits") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits(&position, bytes) > 0 else { throw error("expected digits after '.'") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits(&position, bytes) > 0 else { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw error("not a number: \(text)") }
        return .number(value)
    }

    /// Advances past bytes that neither end a string nor start an escape (no quote, backslash or
    /// control byte), eight at a time; returns the OR of the bytes passed (ASCII when its high bits
    /// are clear). The text of a model's messages is long, so the scan dominates a string's parse.
    @inline(__always)
    mutating func skipPlainText() -> UInt64 {
        var seen: UInt64 = 0
        while position + 8 <= bytes.count {
            let word = UnsafeRawPointer(bytes.baseAddress! + position).loadUnaligned(as: UInt64.self)
            let special =
                ByteLanes.equal(to: UInt8(ascii: "\""), in: word) | ByteLanes.equal(to: UInt8(ascii: "\\"), in: word)
                | ByteLanes.below(0x20, in: word)
            if special != 0 { break }
            seen |= word
            position += 8
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            seen |= UInt64(byte)
            position += 1
        }
        return seen
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        position += 1
        let start = position
        // Fast path: no escapes.
        let seen = skipPlainText()
        guard position < bytes.count else { throw error("unterminated string") }
        if bytes[position] == UInt8(ascii: "\"") {
            let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
            position += 1
            if ByteLanes.high(in: seen) == 0 { return String(decoding: slice, as: UTF8.self) }
            return try validated(slice, from: start)
        }
        if bytes[position] < 0x20 { throw error("control character in a string (escape it)") }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        buffer.reserveCapacity(2 * buffer.count + 64)
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try buffer.withUnsafeBufferPointer { (b) throws(JSONSyntaxError) -> String in
                    try validated(b, from: start)
                }
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error("unexpected end of input in a string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A surrogate pair; a lone one becomes U+FFFD.
                        if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        {
                            position += 2
                            let low = try hex4()
                            scalar =
                                (0xDC00..<0xE000).contains(low)
                                ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                        } else {
                            scalar = 0xFFFD
                        }
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        scalar = 0xFFFD
                    }
                    buffer.append(contentsOf: Array(String(Unicode.Scalar(scalar)!).utf8))
                default: throw error("unknown escape \\\(Character(Unicode.Scalar(escape)))")
                }
            default:
                if byte < 0x20 { throw error("control character in a string (escape it)") }
                // The run up to the next quote, escape or control byte, copied at once (JSON
                // held in a string attribute escapes every quote, so runs are short but many).
                let run = position
                _ = skipPlainText()
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position]))
            }
        }
        throw error("unterminated string")
    }

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var high: UInt64 = 0
        var offset = 0
        while offset + 8 <= raw.count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < raw.count {
            high |= UInt64(raw[offset])
            offset += 1
        }
        return ByteLanes.high(in: high) == 0
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("expected four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw error("expected four hex digits after \\u")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    func validated(_ slice: UnsafeBufferPointer<UInt8>, from start: Int) throws(JSONSyntaxError) -> String {
        // ASCII is valid UTF-8 as it stands: decoding it skips the validator's generic setup,
        // which cost more than the check for the short keys and values most JSON is made of.
        if Self.isASCII(slice) { return String(decoding: slice, as: UTF8.self) }
        guard let string = String(validating: slice, as: UTF8.self) else {
            var at = self
            at.position = start
            throw at.error("invalid UTF-8 in a string")
        }
        return string
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
}
