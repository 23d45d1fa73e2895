import LoupeAgents
import LoupeBase

/// What OTLP allows beyond a span's shape, checked once a request's spans are read and before any
/// is stored: a sender is told, in the partial success, of each span Loupe will not keep as sent.
///
/// Rejected (each named by its path): an all-zero trace or span id (OTLP's invalid id, which
/// would put every such sender in one trace), a parent id that is not 16 hex digits, a negative
/// start, an end before the start, and a span id given twice for one trace in one request (the
/// last is kept, as a later request's would be; the earlier ones are rejected, naming it).
///
/// Kept, changed: an all-zero parent id is no parent (the span is a root), and U+0000 in a span's
/// name becomes U+FFFD (storage and terminals end a string at a NUL; the span's source keeps the
/// name as sent).
extension OTLPDecoding {
    /// `spans`, each with its path in the request, less those OTLP's rules reject, which are
    /// added to `rejected`.
    static func checked(
        _ spans: [(path: String, span: OTLPImporter.OTLPSpan)], rejected: [TraceImportError]
    ) -> Decoded {
        var decoded = Decoded(spans: [], rejected: rejected)
        var valid: [(path: String, span: OTLPImporter.OTLPSpan)] = []
        valid.reserveCapacity(spans.count)
        for item in spans {
            if let problem = problem(item.span, path: item.path) {
                decoded.rejected.append(problem)
            } else {
                valid.append(item)
            }
        }
        // The last of a repeated (trace, span) id is the one kept; the earlier ones name it.
        var last: [SpanKey: Int] = [:]
        for (index, item) in valid.enumerated() { last[SpanKey(item.span)] = index }
        decoded.spans.reserveCapacity(valid.count)
        for (index, item) in valid.enumerated() {
            let kept = last[SpanKey(item.span)]!
            if kept == index {
                decoded.spans.append(item.span)
            } else {
                decoded.rejected.append(
                    TraceImportError(
                        file: "request", field: "\(item.path).spanId",
                        "\(item.span.span.spanID) is given again for trace \(item.span.traceID) at "
                            + "\(valid[kept].path), which is the one kept"))
            }
        }
        return decoded
    }

    /// Why OTLP's rules reject `found`, naming the field at `path`; nil when they do not.
    static func problem(_ found: OTLPImporter.OTLPSpan, path: String) -> TraceImportError? {
        func fail(_ field: String, _ message: String) -> TraceImportError {
            TraceImportError(file: "request", field: "\(path).\(field)", message)
        }
        let span = found.span
        if isZero(found.traceID) { return fail("traceId", "is all zeros, which OTLP defines as no valid trace id") }
        if isZero(span.spanID) { return fail("spanId", "is all zeros, which OTLP defines as no valid span id") }
        if let parent = span.parentID, !isHex(parent, length: 16) {
            return fail("parentSpanId", "\"\(parent)\" is not 16 hex digits")
        }
        if span.startNs < 0 { return fail("startTimeUnixNano", "\(span.startNs) is before 1970 (negative)") }
        if let end = span.endNs, end < span.startNs {
            return fail("endTimeUnixNano", "\(end) is before the span's start, \(span.startNs)")
        }
        return nil
    }

    /// `found` as it is stored: an all-zero parent is none, and a NUL in the name is U+FFFD.
    static func normalized(_ found: OTLPImporter.OTLPSpan) -> OTLPImporter.OTLPSpan {
        var found = found
        if let parent = found.span.parentID, isZero(parent) { found.span.parentID = nil }
        if found.span.name.utf8.contains(0) {
            found.span.name = found.span.name.replacingNULs()
        }
        return found
    }

    private struct SpanKey: Hashable {
        var trace: String
        var span: String

        init(_ found: OTLPImporter.OTLPSpan) {
            trace = found.traceID
            span = found.span.spanID.lowercased()
        }
    }

    private static func isZero(_ hex: String) -> Bool {
        !hex.isEmpty && hex.utf8.allSatisfy { $0 == UInt8(ascii: "0") }
    }

    private static func isHex(_ s: String, length: Int) -> Bool {
        s.utf8.count == length
            && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }
}

extension String {
    /// The string with each U+0000 replaced by U+FFFD.
    fileprivate func replacingNULs() -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: unicodeScalars.lazy.map { $0 == "\0" ? "\u{FFFD}" : $0 })
        return String(scalars)
    }
}
