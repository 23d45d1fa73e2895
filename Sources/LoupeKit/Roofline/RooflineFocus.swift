import LoupeAgents
import LoupeBase
import LoupeStore

/// Kernel runs shown on their own on the roofline: the MiniLM forward pass a trace step ran
/// (`p` on the step, `roofline show --trace`).
package struct RooflineFocus: Hashable, Sendable {
    package var runIDs: [Int64]
    /// What the runs are, for the panel's title: `trace 3 · span 4 search → MiniLM forward · 11 tokens`.
    package var title: String
    /// Where they came from.
    package var trace: Int64
    package var ordinal: Int

    package init(runIDs: [Int64], title: String, trace: Int64, ordinal: Int) {
        self.runIDs = runIDs
        self.title = title
        self.trace = trace
        self.ordinal = ordinal
    }
}

extension TraceService {
    /// The forward passes recorded in trace `id` at span `ordinal` or under it (an agent's
    /// search step holds its query's), in span order, or else the pass a layer span belongs to;
    /// every one in the trace when `ordinal` is nil. Each names the kernel runs it recorded.
    package func forwardPasses(trace id: Int64, at ordinal: Int? = nil) throws -> [RooflineFocus] {
        let loaded = try load(id)
        var range = loaded.spans.indices
        if let ordinal {
            guard loaded.spans.indices.contains(ordinal) else {
                throw TraceImportError(
                    file: "trace \(id)", part: "span \(ordinal)",
                    "no such span (spans 0…\(loaded.spans.count - 1))")
            }
            let depth = loaded.depths[ordinal]
            let below = loaded.spans[(ordinal + 1)...].prefix { loaded.depths[$0.ordinal] > depth }.count
            range = ordinal..<(ordinal + 1 + below)
            // Nothing at or under it (a layer of a pass): the pass above it.
            if !range.contains(where: { loaded.spans[$0].kind == SpanKind.embedding.rawValue }) {
                let byID = Dictionary(
                    loaded.spans.map { ($0.spanID, $0.ordinal) }, uniquingKeysWith: { first, _ in first })
                var above = loaded.spans[ordinal].parentSpanID.flatMap { byID[$0] }
                while let index = above, loaded.spans[index].kind != SpanKind.embedding.rawValue {
                    above = loaded.spans[index].parentSpanID.flatMap { byID[$0] }
                }
                if let index = above { range = index..<(index + 1) }
            }
        }
        return try range.filter { loaded.spans[$0].kind == SpanKind.embedding.rawValue }.compactMap { index in
            let span = loaded.spans[index]
            let attributes = try payload(trace: id, ordinal: span.ordinal).payload.attributes
            // Imported spans may carry anything under this name: whole numbers only.
            let ids = (attributes[ForwardPassRecord.kernelRunsAttribute]?.array ?? []).compactMap(\.number).compactMap {
                Int64(exactly: $0)
            }
            guard !ids.isEmpty else { return nil }
            // The step that ran it: the nearest tool or model call above it.
            let steps: Set<String> = [SpanKind.tool.rawValue, SpanKind.llm.rawValue]
            let depth = loaded.depths[index]
            let caller = loaded.spans[..<index].last { steps.contains($0.kind) && loaded.depths[$0.ordinal] < depth }
            let step = caller.map { "span \($0.ordinal) \($0.name) → " } ?? "span \(span.ordinal) "
            return RooflineFocus(
                runIDs: ids, title: "trace \(id) · " + step + span.name, trace: id, ordinal: span.ordinal)
        }
    }
}
