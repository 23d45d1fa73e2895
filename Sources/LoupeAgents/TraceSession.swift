import Foundation
import LoupeBase

extension Trace {
    /// The attributes that name a conversation or session, most specific first: OpenInference's
    /// and OpenTelemetry's `session.id`, the GenAI conventions' `gen_ai.conversation.id`,
    /// LangGraph's `thread_id` (as OpenInference and Traceloop carry LangChain metadata).
    static let sessionKeys = [
        "session.id", "gen_ai.conversation.id", "langgraph.thread_id", "thread_id", "metadata.thread_id",
        "traceloop.association.properties.thread_id", "traceloop.association.properties.session_id",
    ]

    /// The session this trace is one turn of: the first session attribute on its root spans,
    /// then on any span, then in the trace's metadata (OpenInference's `metadata` JSON holds
    /// LangGraph's `thread_id`); for an Inspect sample, its epochs are one session. Nil when
    /// nothing names one.
    package var sessionID: String? {
        if format == .inspect {
            // "run/sample/epoch": every epoch of a sample is a turn of the sample's session.
            let parts = externalID.split(separator: "/", omittingEmptySubsequences: false)
            return parts.count >= 3 ? parts.dropLast().joined(separator: "/") : nil
        }
        let ordered = spans.filter { $0.parentID == nil } + spans.filter { $0.parentID != nil }
        for span in ordered {
            for key in Self.sessionKeys {
                if let value = span.attributes[key], let text = Self.identifier(value) { return text }
            }
            if let text = span.attributes["metadata"]?.string, text.hasPrefix("{"),
                let metadata = try? JSONValue.parse(text), let thread = metadata["thread_id"] ?? metadata["session_id"],
                let id = Self.identifier(thread)
            {
                return id
            }
        }
        for key in Self.sessionKeys {
            if let value = metadata[key], let text = Self.identifier(value) { return text }
        }
        return nil
    }

    private static func identifier(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): s.isEmpty ? nil : s
        case .number(let n) where n == n.rounded() && abs(n) < 9e18: String(Int64(n))
        default: nil
        }
    }

    /// Spans waiting for a parent that has not arrived: a trace still being received (an
    /// exporter sends a span when it ends, so the root, which ends last, comes last).
    package var awaitingParents: Int {
        let ids = Set(spans.map(\.spanID))
        return spans.filter { $0.parentID.map { !ids.contains($0) } ?? false }.count
    }
}
