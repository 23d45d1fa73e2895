import Foundation
import LoupeBase

/// One trace model for every source (DESIGN.md §4): a trace is a tree of spans carrying
/// messages, tool calls and usage. Importers map each format onto it; the Traces panel, the
/// diff and the exporters read only this.
package struct Trace: Hashable, Sendable {
    /// The source's own id (OTLP trace id, Inspect sample id and epoch, file and index).
    package var externalID: String
    package var format: TraceFormat
    package var name: String
    /// Spans in tree order: depth first, siblings by start time, so parents come first.
    package var spans: [TraceSpan]
    package var scores: [Score] = []
    /// Whether span times are real clock times (a message list has only an order).
    package var timed = true
    package var metadata: JSONObject = [:]

    package init(externalID: String, format: TraceFormat, name: String, spans: [TraceSpan]) {
        self.externalID = externalID
        self.format = format
        self.name = name
        self.spans = spans
    }

    package var startNs: Int64 { spans.map(\.startNs).min() ?? 0 }
    package var endNs: Int64 { spans.map { $0.endNs ?? $0.startNs }.max() ?? 0 }
    package var errorCount: Int { spans.filter(\.status.isError).count }
    package var usage: Usage { spans.reduce(Usage()) { $0 + $1.usage } }
}
