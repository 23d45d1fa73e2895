import Foundation
import LoupeBase

/// The OpenAI Agents SDK's trace export: what its `BackendSpanExporter` POSTs to OpenAI's
/// dashboard, `{"data": [item…]}`, each item a trace (`"object": "trace"`: id, workflow_name,
/// group_id, metadata) or a span (`"object": "trace.span"`: id, trace_id, parent_id, started_at,
/// ended_at, span_data, error). Span types: agent, generation (a chat-completions call with its
/// messages and usage), response (a Responses API call: its id and usage), function (a tool),
/// handoff, guardrail, custom (the SDK's task and turn spans among them), mcp_tools, and the voice
/// ones. A trace's `group_id` (the SDK's conversation or thread) is its session.
package enum OpenAIAgentsImporter {
    /// Whether `value` is such an export: a `data` list whose first item is a trace or a span.
    package static func matches(_ value: JSONValue) -> Bool {
        guard let first = value["data"]?.array?.first?["object"]?.string else { return false }
        return first == "trace" || first == "trace.span"
    }

    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch {
            throw TraceImportError(file: file, "not JSON (\(error))")
        }
        guard let items = value["data"]?.array else {
            throw TraceImportError(file: file, field: "data", "missing: not an OpenAI Agents SDK trace export")
        }
        var order: [String] = []
        var headers: JSONObject = [:]
        var spans: [String: [TraceSpan]] = [:]
        for (index, item) in items.enumerated() {
            let part = "data[\(index)]"
            guard let id = item["object"]?.string == "trace" ? item["id"]?.string : item["trace_id"]?.string else {
                throw TraceImportError(file: file, part: part, field: "trace_id", "missing")
            }
            if headers[id] == nil && spans[id] == nil { order.append(id) }
            switch item["object"]?.string {
            case "trace": headers[id] = item
            case "trace.span": spans[id, default: []].append(try span(item, file: file, part: part))
            case let other:
                throw TraceImportError(
                    file: file, part: part, field: "object", "\(other ?? "none") is not trace or trace.span")
            }
        }
        return order.map { id in
            let header = headers[id]
            let ordered = OTLPImporter.treeOrder(spans[id] ?? [])
            let name = header?["workflow_name"]?.string ?? ordered.first?.name ?? id
            var trace = Trace(externalID: id, format: .openaiAgents, name: name, spans: ordered)
            if let group = header?["group_id"]?.string, !group.isEmpty {
                trace.metadata["session.id"] = .string(group)
            }
            if let metadata = header?["metadata"]?.object, !metadata.isEmpty {
                trace.metadata["metadata"] = .object(metadata)
            }
            return trace
        }
    }

    private static func span(_ item: JSONValue, file: String, part: String) throws(TraceImportError) -> TraceSpan {
        func fail(_ field: String, _ message: String) -> TraceImportError {
            TraceImportError(file: file, part: part, field: field, message)
        }
        guard let id = item["id"]?.string, !id.isEmpty else { throw fail("id", "missing") }
        func time(_ field: String) throws(TraceImportError) -> Int64? {
            guard let text = item[field]?.string else { return nil }
            let ns: Int64?
            do { ns = try InspectImporter.timestamp(text, field: field) } catch {
                throw fail(field, "\(error.value) \(error.problem)")
            }
            guard let ns else { throw fail(field, "\"\(text)\" is not an ISO 8601 time") }
            return ns
        }
        guard let start = try time("started_at") else { throw fail("started_at", "missing") }
        let data = item["span_data"] ?? .object([:])
        let type = data["type"]?.string ?? "custom"
        var span = TraceSpan(
            spanID: id, parentID: item["parent_id"]?.string, kind: .other, name: type, startNs: start,
            endNs: try time("ended_at"))
        span.raw = item
        var attributes: JSONObject = ["openai_agents.span_type": .string(type)]
        switch type {
        case "agent":
            span.kind = .agent
            span.name = data["name"]?.string ?? "agent"
            for key in ["handoffs", "tools", "output_type"] where data[key] != nil && data[key] != .null {
                attributes["agent.\(key)"] = data[key]
            }
        case "generation":
            span.kind = .llm
            span.model = data["model"]?.string
            span.name = "generation" + (span.model.map { " \($0)" } ?? "")
            span.input = (data["input"]?.array ?? []).compactMap(GenAIMessages.message)
            span.output = (data["output"]?.array ?? []).compactMap(GenAIMessages.message)
            span.usage = usage(data["usage"])
            if let config = data["model_config"]?.object {
                // Only what was set; the SDK lists every parameter, most of them null.
                for (key, value) in config where value != .null && key != "base_url" {
                    attributes["gen_ai.request.\(key)"] = value
                }
            }
        case "response":
            span.kind = .llm
            span.name = "response"
            span.usage = usage(data["usage"])
            if let id = data["response_id"]?.string { attributes["gen_ai.response.id"] = .string(id) }
        case "function":
            span.kind = .tool
            let name = data["name"]?.string ?? "function"
            span.name = name
            span.tool = ToolCall(
                id: nil, name: name, arguments: data["input"]?.text ?? "", result: data["output"]?.text)
            if let mcp = data["mcp_data"], mcp != .null { attributes["mcp_data"] = mcp }
        case "handoff":
            let from = data["from_agent"]?.string ?? "?"
            let to = data["to_agent"]?.string ?? "?"
            span.name = "handoff \(from) → \(to)"
        case "guardrail":
            span.kind = .eval
            span.name = "guardrail " + (data["name"]?.string ?? "")
            let triggered = data["triggered"]?.bool ?? false
            attributes["guardrail.triggered"] = .bool(triggered)
            if triggered { span.status = .error("guardrail tripwire triggered") }
        case "custom":
            span.name = data["name"]?.string ?? "custom"
            if let payload = data["data"]?.object {
                for (key, value) in payload { attributes["custom.\(key)"] = value }
            }
        default:
            span.name = data["name"]?.string ?? type
        }
        if let error = item["error"], error != .null {
            let message = error["message"]?.string ?? error.text
            span.status = .error(message)
            if span.tool != nil { span.tool?.error = message }
            if let data = error["data"], data != .null { attributes["error.data"] = data }
        } else if span.status == .unset, item["ended_at"]?.string != nil {
            span.status = .ok
        }
        span.attributes = attributes
        return span
    }

    /// The SDK's usage: input/output tokens, cached and reasoning details.
    private static func usage(_ value: JSONValue?) -> Usage {
        guard let value, value != .null else { return Usage() }
        func count(_ v: JSONValue?) -> Int? { v?.int.map { Int(clamping: $0) } }
        return Usage(
            inputTokens: count(value["input_tokens"]), outputTokens: count(value["output_tokens"]),
            cacheReadTokens: count(value["input_tokens_details"]?["cached_tokens"]),
            cacheWriteTokens: count(value["input_tokens_details"]?["cache_write_tokens"]),
            reasoningTokens: count(value["output_tokens_details"]?["reasoning_tokens"]), cost: nil)
    }
}
