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
    /// The trace's usage: every span's, less the model calls a span below them describes again
    /// (``outerModelCalls``), so that a call counts once.
    package var usage: Usage {
        let outer = outerModelCalls
        return spans.indices.reduce(Usage()) { outer[$1] ? $0 : $0 + spans[$1].usage }
    }

    /// For each span, whether it is a model call whose call a span below it records with its usage
    /// (an agent framework's generation span over the model server's span of the same request):
    /// its usage and step are not counted (``NestedModelCalls``).
    package var outerModelCalls: [Bool] {
        NestedModelCalls.outer(
            ids: spans.map(\.spanID), parents: spans.map(\.parentID), isModelCall: spans.map { $0.kind == .llm },
            carriesUsage: spans.map {
                NestedModelCalls.carriesUsage(
                    inputTokens: $0.usage.inputTokens, outputTokens: $0.usage.outputTokens, cost: $0.usage.cost)
            })
    }

    /// The spans a replay steps through (``TraceImport/steps(_:leaving:)``), as ordinals.
    package var steps: [Int] {
        TraceImport.steps(spans.enumerated().map { ($0, $1.kind, $1.startNs) }, leaving: outerModelCalls)
    }
}
