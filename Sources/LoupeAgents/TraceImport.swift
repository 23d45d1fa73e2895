import Foundation
import LoupeBase

/// Reads a trace file of any supported format, found from its name and first bytes.
package enum TraceImport {
    /// The format `data` is in, or nil when it is none Loupe reads.
    package static func detect(_ data: Data, file: String) -> TraceFormat? {
        let name = file.lowercased()
        if name.hasSuffix(".traj") || name.hasSuffix(".traj.json") { return .sweAgent }
        if name.hasSuffix(".eval") || data.starts(with: [0x50, 0x4B, 3, 4]) { return .inspect }
        // The first value's keys decide: the first line's for JSON Lines, the whole document's
        // when it is small; a large single document by the member names near its start.
        let head = data.prefix(1 << 16)
        let firstLine = head.firstIndex(of: 0x0A).map { data[..<$0] } ?? head
        let value =
            (try? JSONValue.parse(Data(firstLine))) ?? (data.count <= 1 << 20 ? try? JSONValue.parse(data) : nil)
        guard let value else {
            let text = String(decoding: head, as: UTF8.self)
            if text.contains("\"resourceSpans\"") || text.contains("\"resource_spans\"") { return .otlp }
            if text.contains("\"trace.span\"") && text.contains("\"data\"") { return .openaiAgents }
            if text.contains("\"eval\"") && (text.contains("\"samples\"") || text.contains("\"version\"")) {
                return .inspect
            }
            if text.contains("\"trajectory\"") { return .sweAgent }
            if text.contains("\"messages\"") || text.contains("\"role\"") { return .openai }
            return nil
        }
        if value["resourceSpans"] != nil || value["resource_spans"] != nil { return .otlp }
        if OpenAIAgentsImporter.matches(value) { return .openaiAgents }
        if value["eval"] != nil && (value["samples"] != nil || value["version"] != nil) { return .inspect }
        if value["trajectory"] != nil || value["trajectory_format"] != nil { return .sweAgent }
        if value["messages"] != nil || value.array?.first?["role"] != nil || value.array?.first?["messages"] != nil {
            return .openai
        }
        return nil
    }

    /// The traces in one file.
    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        switch detect(data, file: file) {
        case .otlp: return try OTLPImporter.traces(data, file: file)
        case .openai: return try ChatMessages.traces(data, file: file)
        case .inspect: return try InspectImporter.traces(data, file: file)
        case .sweAgent: return try SWEAgentImporter.traces(data, file: file)
        case .openaiAgents: return try OpenAIAgentsImporter.traces(data, file: file)
        case .loupe, nil:
            throw TraceImportError(
                file: file,
                "not a trace file Loupe reads (OTLP/JSON, Inspect AI .json/.eval, OpenAI messages, OpenAI Agents SDK export, SWE-agent .traj)"
            )
        }
    }

    /// The spans a replay steps through: model calls, tool calls, retrievals, embeddings and
    /// evaluations, in time order (file order for an untimed trace); every span when a trace has
    /// none of those. A span whose place in `spans` is true in `outer` is left out: a model call
    /// that a span below it records again (``NestedModelCalls``) is one step, the inner span's.
    package static func steps(
        _ spans: [(ordinal: Int, kind: SpanKind, startNs: Int64)], leaving outer: [Bool] = []
    ) -> [Int] {
        let work = spans.indices.filter { i in
            spans[i].kind != .agent && spans[i].kind != .other && !(i < outer.count && outer[i])
        }.map { spans[$0] }
        let chosen = work.isEmpty ? spans : work
        return chosen.sorted { $0.startNs != $1.startNs ? $0.startNs < $1.startNs : $0.ordinal < $1.ordinal }.map(
            \.ordinal)
    }
}
