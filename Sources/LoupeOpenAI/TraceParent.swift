import Foundation

/// A request's W3C `traceparent` header (Trace Context, level 1): the caller's trace and the span
/// that made the request. A served request recorded under it joins the caller's trace as a child of
/// that span, so an agent that exports its own spans over OTLP (the OpenAI Agents SDK through
/// OpenInference, an OpenTelemetry-instrumented HTTP client) and the server's record of each model
/// call meet in one trace.
///
/// A header that does not parse is ignored, as the specification asks of a receiver: the request
/// is then a trace of its own.
package struct TraceParent: Hashable, Sendable {
    /// 32 lowercase hex digits, not all zero.
    package let traceID: String
    /// 16 lowercase hex digits, not all zero: the caller's span.
    package let spanID: String

    /// `version-traceid-parentid-flags`, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
    /// Versions above 00 may append fields after the flags; version ff is invalid.
    package init?(header: String?) {
        guard let header else { return nil }
        let fields = header.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, Self.isHex(fields[0]), fields[0] != "ff",
            fields[0] != "00" || fields.count == 4,
            fields[1].count == 32, Self.isHex(fields[1]), fields[1].contains(where: { $0 != "0" }),
            fields[2].count == 16, Self.isHex(fields[2]), fields[2].contains(where: { $0 != "0" }),
            fields[3].count == 2, Self.isHex(fields[3])
        else { return nil }
        traceID = String(fields[1])
        spanID = String(fields[2])
    }

    /// Lowercase hex only: the specification forbids uppercase.
    private static func isHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
