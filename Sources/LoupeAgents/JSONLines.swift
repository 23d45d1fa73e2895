import Foundation
import LoupeBase

/// JSON Lines (one value per line, blank lines skipped) or a single JSON document that may span
/// lines: each value with its 1-based line (0 for a whole document). Lines are parsed in place.
package enum JSONLines {
    package static func values(_ data: Data, file: String) throws(TraceImportError) -> [(line: Int, value: JSONValue)] {
        try map(data, file: file) { (line, value) throws(TraceImportError) in (line, value) }
    }

    /// `transform` over each value as it is parsed, on every core, in order: a line's tree is
    /// dropped as soon as its transform is done with it.
    package static func map<R: Sendable>(
        _ data: Data, file: String,
        _ transform: @Sendable (_ line: Int, _ value: JSONValue) throws(TraceImportError) -> R
    ) throws(TraceImportError) -> [R] {
        // A single document over several lines (pretty-printed) parses whole.
        if let whole = try? JSONValue.parse(data) { return [try transform(0, whole)] }
        return try map(lines: data, file: file, transform)
    }

    /// Whether the first non-blank line of `bytes` closes every bracket it opens (JSON Lines),
    /// rather than starting a document spread over lines; read without parsing.
    package static func firstLineIsWhole(_ bytes: some ContiguousBytes) -> Bool {
        bytes.withUnsafeBytes { raw in
            let all = raw.assumingMemoryBound(to: UInt8.self)
            let start = JSONScanner(all).skipWhitespace(0)
            guard start < all.count, let base = all.baseAddress else { return false }
            // Only the line the first value starts on is scanned: whole if the value ends the line.
            let newline = memchr(base + start, 0x0A, all.count - start).map {
                base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
            }
            let line = JSONScanner(UnsafeBufferPointer(rebasing: all[start..<(newline ?? all.count)]))
            guard let end = try? line.skipValue(0) else { return false }
            return line.skipWhitespace(end) == line.bytes.count
        }
    }

    /// The only non-blank line of `bytes` (its range, and how many lines come before it), or nil
    /// when it has none or several.
    package static func onlyLine(_ bytes: [UInt8]) -> (range: Range<Int>, index: Int)? {
        var found: (range: Range<Int>, index: Int)?
        var start = 0
        var index = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            if bytes[start..<end].contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                if found != nil { return nil }
                found = (start..<end, index)
            }
            start = end + 1
            index += 1
        }
        return found
    }

    /// `transform` over each non-blank line of `bytes` (a block of a larger file, whose first
    /// line is `firstLine`), parsed on every core, in order.
    package static func map<Bytes: ContiguousBytes & Sendable, R: Sendable>(
        lines bytes: Bytes, file: String, firstLine: Int = 1,
        _ transform: @Sendable (_ line: Int, _ value: JSONValue) throws(TraceImportError) -> R
    ) throws(TraceImportError) -> [R] {
        var lines: [(line: Int, range: Range<Int>)] = []
        bytes.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var line = firstLine - 1
            while start < bytes.count {
                line += 1
                var end = bytes.count
                if let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start) {
                    end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if slice.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                    lines.append((line, start..<end))
                }
                start = end + 1
            }
        }
        return try parallelMap(lines) { (entry) throws(TraceImportError) -> R in
            let result = bytes.withUnsafeBytes { raw in
                JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[entry.range]))
            }
            switch result {
            case .success(let value): return try transform(entry.line, value)
            case .failure(let error):
                throw TraceImportError(file: file, line: entry.line, "not JSON (\(error))")
            }
        }
    }
}
