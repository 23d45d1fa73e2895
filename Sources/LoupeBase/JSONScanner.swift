import Foundation
import Glibc

/// Walks a JSON document's structure without building it: an object's members and an array's
/// elements as byte offsets, values skipped by their brackets and quotes. For documents too large
/// to parse whole (a trace export of one request holding 50,000 spans, a profiler trace), whose
/// parts are then parsed one at a time, on every core. What it skips it checks only for balance;
/// what the caller parses is checked in full.
package struct JSONScanner {
    package let bytes: UnsafeBufferPointer<UInt8>

    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The offset of the first byte at or after `offset` that is not JSON whitespace.
    package func skipWhitespace(_ offset: Int) -> Int {
        var i = offset
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        return i
    }

    /// Calls `member` with each key of the object whose `{` is the first non-space byte at or
    /// after `offset`, and the offset of its value. `member` returns the offset just past the
    /// value when it read it, or nil to have it skipped. Returns the offset just past the `}`.
    @discardableResult
    package func forEachMember(
        of offset: Int, _ member: (_ key: String, _ value: Int) throws(JSONSyntaxError) -> Int?
    ) throws(JSONSyntaxError) -> Int {
        try forEachItem(of: offset, UInt8(ascii: "{"), UInt8(ascii: "}"), "object") { i throws(JSONSyntaxError) in
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw error("expected a member name in quotes", i)
            }
            let end = try stringEnd(i)
            let key = try self.key(i..<end)
            let value = skipWhitespace(try expect(UInt8(ascii: ":"), at: skipWhitespace(end)))
            if let end = try member(key, value) { return end }
            return try skipValue(value)
        }
    }

    /// Calls `element` with the offset of each element of the array whose `[` is the first
    /// non-space byte at or after `offset`; it returns the offset just past the element (or nil
    /// to have it skipped). Returns the offset just past the `]`.
    @discardableResult
    package func forEachElement(
        of offset: Int, _ element: (_ index: Int, _ value: Int) throws(JSONSyntaxError) -> Int?
    ) throws(JSONSyntaxError) -> Int {
        var index = 0
        return try forEachItem(of: offset, UInt8(ascii: "["), UInt8(ascii: "]"), "array") {
            value throws(JSONSyntaxError) in
            defer { index += 1 }
            if let end = try element(index, value) { return end }
            return try skipValue(value)
        }
    }

    /// Walks the members or elements between the bracket `open`, the first non-space byte at or
    /// after `offset`, and its `close`: `item` gets the offset where each starts and returns the
    /// offset just past it. Returns the offset just past `close`.
    private func forEachItem(
        of offset: Int, _ open: UInt8, _ close: UInt8, _ kind: String,
        _ item: (_ start: Int) throws(JSONSyntaxError) -> Int
    ) throws(JSONSyntaxError) -> Int {
        var i = skipWhitespace(try expect(open, at: skipWhitespace(offset)))
        if i < bytes.count, bytes[i] == close { return i + 1 }
        while true {
            i = skipWhitespace(try item(skipWhitespace(i)))
            guard i < bytes.count else { throw error("the \(kind) is not closed", i) }
            if bytes[i] == close { return i + 1 }
            i = try expect(UInt8(ascii: ","), at: i)
        }
    }

    /// The offset just past the value that starts at `offset`: a string to its closing quote, an
    /// object or array to its matching bracket (strings inside included), a number or literal to
    /// the next delimiter.
    package func skipValue(_ offset: Int) throws(JSONSyntaxError) -> Int {
        guard offset < bytes.count else { throw error("expected a value", offset) }
        switch bytes[offset] {
        case UInt8(ascii: "\""):
            return try stringEnd(offset)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // The closing bracket each open one expects, innermost last.
            var closers: [UInt8] = []
            var i = offset
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    i = try stringEnd(i)
                    continue
                case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
                case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard closers.popLast() == bytes[i] else {
                        throw error("'\(Character(Unicode.Scalar(bytes[i])))' closes no open bracket of its kind", i)
                    }
                    if closers.isEmpty { return i + 1 }
                default: break
                }
                i += 1
            }
            throw error("the value is not closed", offset, ranOut: true)
        default:
            var i = offset
            while i < bytes.count {
                let byte = bytes[i]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
                    || byte == 0x0A || byte == 0x0D || byte == 0x09
                {
                    break
                }
                i += 1
            }
            guard i > offset else { throw error("expected a value", offset) }
            return i
        }
    }

    /// The string whose opening quote is at `offset`, unescaped, and the offset just past it.
    package func string(at offset: Int) throws(JSONSyntaxError) -> (value: String, end: Int) {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
            throw error("expected a string", offset)
        }
        let end = try stringEnd(offset)
        return (try key(offset..<end), end)
    }

    /// The number at `offset` (or a string holding one, as some writers quote them), and the
    /// offset just past it.
    package func number(at offset: Int) throws(JSONSyntaxError) -> (value: Double, end: Int) {
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") {
            let (text, end) = try string(at: offset)
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else {
                throw error("expected a number, found \"\(text.prefix(40))\"", offset)
            }
            return (value, end)
        }
        let end = try skipValue(offset)
        let length = end - offset
        guard length < 64, let first = bytes.baseAddress else { throw error("expected a number", offset) }
        // strtod reads to a NUL, so the digits are copied out with one after them.
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { text -> Double? in
            UnsafeMutableRawPointer(text.baseAddress!).copyMemory(from: first + offset, byteCount: length)
            text[length] = 0
            var stop: UnsafeMutablePointer<CChar>?
            let value = strtod(text.baseAddress!, &stop)
            return stop == text.baseAddress! + length ? value : nil
        }
        guard let value, value.isFinite else { throw error("expected a number", offset) }
        return (value, end)
    }

    /// The offset just past the closing quote of the string whose opening quote is at `offset`.
    private func stringEnd(_ offset: Int) throws(JSONSyntaxError) -> Int {
        guard let base = bytes.baseAddress else { throw error("the string is not closed", offset, ranOut: true) }
        var i = offset + 1
        while i < bytes.count {
            guard let found = memchr(base + i, Int32(UInt8(ascii: "\"")), bytes.count - i) else { break }
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            // A quote after an odd run of backslashes is escaped.
            var backslashes = 0
            while quote - backslashes - 1 > offset, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            if backslashes % 2 == 0 { return quote + 1 }
            i = quote + 1
        }
        throw error("the string is not closed", offset, ranOut: true)
    }

    /// A member name, unescaped.
    private func key(_ range: Range<Int>) throws(JSONSyntaxError) -> String {
        let inner = UnsafeBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        switch JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: bytes[range])) {
        case .success(let value): return value.string ?? ""
        case .failure(let failure): throw error(failure.message, range.lowerBound)
        }
    }

    private func expect(_ byte: UInt8, at offset: Int) throws(JSONSyntaxError) -> Int {
        guard offset < bytes.count, bytes[offset] == byte else {
            throw error("expected '\(Character(Unicode.Scalar(byte)))'", offset)
        }
        return offset + 1
    }

    /// An error at byte `offset`, with its line and column.
    package func error(_ message: String, _ offset: Int, ranOut: Bool = false) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        var error = JSONSyntaxError(message: message, line: line, column: offset - lineStart + 1)
        error.ranOut = ranOut || offset >= bytes.count
        return error
    }
}
