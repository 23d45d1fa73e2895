import Foundation
import LoupeBase

/// Writes a trace back out: OTLP/JSON with the GenAI conventions (one export request), an
/// OpenAI chat-completions message list, or ATIF (the agent trajectory interchange format).
package enum TraceExport {
    package enum Format: String, CaseIterable, Sendable {
        case otlp, openai, atif
    }

    package static func export(_ trace: Trace, as format: Format) -> JSONValue {
        switch format {
        case .otlp: return otlp(trace)
        case .openai: return openai(trace)
        case .atif: return atif(trace)
        }
    }

    // MARK: - OTLP

    /// `digits` hex digits: the id itself when it already is that, else a stable hash of it
    /// (FNV-1a, widened), so re-exporting gives the same ids. A span id that is not hex is hashed
    /// with its trace's (`scope`): importers number spans within a trace ("root", "1"…), and
    /// receivers such as Phoenix keep one span per span id across all traces.
    static func hexID(_ id: String, digits: Int, scope: String = "") -> String {
        if id.utf8.count == digits, id.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) {
            return id
        }
        var out = ""
        let bytes = scope.isEmpty ? Array(id.utf8) : Array(scope.utf8) + [0] + Array(id.utf8)
        var seed: UInt64 = 0xCBF2_9CE4_8422_2325
        while out.count < digits {
            var hash = seed
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0100_0000_01B3
            }
            out += String(format: "%016llx", hash)
            seed = hash
        }
        return String(out.prefix(digits))
    }

    private static func attribute(_ key: String, _ value: JSONValue) -> JSONValue {
        let any: JSONValue
        switch value {
        case .string: any = .object(["stringValue": value])
        case .bool: any = .object(["boolValue": value])
        case .number(let n) where n == n.rounded() && abs(n) < 9e15:
            any = .object(["intValue": .string(String(Int64(n)))])
        case .number: any = .object(["doubleValue": value])
        default: any = .object(["stringValue": .string(value.compactJSON)])
        }
        return .object(["key": .string(key), "value": any])
    }

    /// `value` as OTLP's `AnyValue`, arrays and objects included (`arrayValue`, `kvlistValue`), so
    /// the importer reads back the same JSON; null is the empty `AnyValue`.
    static func anyValue(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null: return .object([:])
        case .string, .bool, .number: return attribute("", value)["value"] ?? .object([:])
        case .array(let values): return .object(["arrayValue": .object(["values": .array(values.map(anyValue))])])
        case .object(let members):
            return .object([
                "kvlistValue": .object([
                    "values": .array(members.map { .object(["key": .string($0.key), "value": anyValue($0.value)]) })
                ])
            ])
        }
    }

    /// A message in the GenAI conventions' `{role, parts[]}` shape.
    private static func genAIMessage(_ m: Message) -> JSONValue {
        var parts: [JSONValue] = []
        if let reasoning = m.reasoning { parts.append(.object(["type": "reasoning", "content": .string(reasoning)])) }
        if let id = m.toolCallID {
            parts.append(.object(["type": "tool_call_response", "id": .string(id), "result": .string(m.text)]))
        } else if !m.text.isEmpty {
            parts.append(.object(["type": "text", "content": .string(m.text)]))
        }
        for call in m.toolCalls {
            parts.append(
                .object([
                    "type": "tool_call", "id": call.id.map(JSONValue.string) ?? .null, "name": .string(call.name),
                    "arguments": argumentsValue(call),
                ]))
        }
        return .object(["role": .string(m.role), "parts": .array(parts)])
    }

    /// Arguments as a JSON object when they parse, else the raw text.
    private static func argumentsValue(_ call: ToolCall) -> JSONValue {
        (try? JSONValue.parse(call.arguments)) ?? .string(call.arguments)
    }

    /// The same span in OpenInference's attributes, which Phoenix (and Langfuse) read for kinds,
    /// models, token counts and chat messages: a trace sent on shows there as it does here.
    /// Loupe reads the GenAI attributes first, so a trace read back is the same.
    private static func openInference(_ span: TraceSpan) -> [JSONValue] {
        let kind: String =
            switch span.kind {
            case .llm: "LLM"
            case .tool: "TOOL"
            case .agent: "AGENT"
            case .retrieval: "RETRIEVER"
            case .embedding: "EMBEDDING"
            case .eval: "EVALUATOR"
            default: "CHAIN"
            }
        var a = [attribute("openinference.span.kind", .string(kind))]
        if let model = span.model { a.append(attribute("llm.model_name", .string(model))) }
        let u = span.usage
        if let v = u.inputTokens { a.append(attribute("llm.token_count.prompt", .number(Double(v)))) }
        if let v = u.outputTokens { a.append(attribute("llm.token_count.completion", .number(Double(v)))) }
        if let i = u.inputTokens, let o = u.outputTokens {
            a.append(attribute("llm.token_count.total", .number(Double(i + o))))
        }
        for (prefix, messages) in [("llm.input_messages", span.input), ("llm.output_messages", span.output)] {
            for (i, m) in messages.enumerated() {
                let at = "\(prefix).\(i).message."
                a.append(attribute(at + "role", .string(m.role)))
                if !m.text.isEmpty { a.append(attribute(at + "content", .string(m.text))) }
                if let id = m.toolCallID { a.append(attribute(at + "tool_call_id", .string(id))) }
                for (j, call) in m.toolCalls.enumerated() {
                    let c = "\(at)tool_calls.\(j).tool_call."
                    if let id = call.id { a.append(attribute(c + "id", .string(id))) }
                    a.append(attribute(c + "function.name", .string(call.name)))
                    a.append(attribute(c + "function.arguments", .string(call.arguments)))
                }
            }
        }
        if let tool = span.tool {
            a.append(attribute("tool.name", .string(tool.name)))
            a.append(attribute("input.value", .string(tool.arguments)))
            if let result = tool.result { a.append(attribute("output.value", .string(result))) }
        } else if span.kind == .llm {
            let said = span.input.filter { !$0.text.isEmpty }
            if let last = said.last(where: { $0.role == "user" }) ?? said.last {
                a.append(attribute("input.value", .string(last.text)))
            }
            if let answer = span.output.last(where: { !$0.text.isEmpty }) {
                a.append(attribute("output.value", .string(answer.text)))
            }
        }
        return a
    }

    static func otlp(_ trace: Trace) -> JSONValue {
        let traceID = hexID(trace.externalID, digits: 32)
        let session = trace.sessionID
        let spans: [JSONValue] = trace.spans.map { span in
            var a: [JSONValue] = []
            if span.parentID == nil {
                // The session on the roots, as OpenInference and the GenAI conventions carry it,
                // so a trace sent on stays a turn of its session.
                if let session {
                    a.append(attribute("session.id", .string(session)))
                    a.append(attribute("gen_ai.conversation.id", .string(session)))
                }
                // A name the trace has apart from its root span's (an Agents SDK workflow's).
                if trace.name != span.name { a.append(attribute("loupe.trace.name", .string(trace.name))) }
            }
            let operation: String? =
                switch span.kind {
                case .llm: "chat"
                case .tool: "execute_tool"
                case .agent: "invoke_agent"
                case .embedding: "embeddings"
                case .retrieval: "retrieval"
                default: nil
                }
            if let operation { a.append(attribute("gen_ai.operation.name", .string(operation))) }
            // The kind itself, for kinds the conventions have no operation for (eval, other).
            a.append(attribute("loupe.span.kind", .string(span.kind.rawValue)))
            if let model = span.model { a.append(attribute("gen_ai.request.model", .string(model))) }
            let u = span.usage
            if let v = u.inputTokens { a.append(attribute("gen_ai.usage.input_tokens", .number(Double(v)))) }
            if let v = u.outputTokens { a.append(attribute("gen_ai.usage.output_tokens", .number(Double(v)))) }
            if let v = u.cacheReadTokens {
                a.append(attribute("gen_ai.usage.cache_read.input_tokens", .number(Double(v))))
            }
            if !span.input.isEmpty {
                a.append(
                    attribute(
                        "gen_ai.input.messages", .string(JSONValue.array(span.input.map(genAIMessage)).compactJSON)))
            }
            if !span.output.isEmpty {
                a.append(
                    attribute(
                        "gen_ai.output.messages", .string(JSONValue.array(span.output.map(genAIMessage)).compactJSON)))
            }
            if let tool = span.tool {
                a.append(attribute("gen_ai.tool.name", .string(tool.name)))
                if let id = tool.id { a.append(attribute("gen_ai.tool.call.id", .string(id))) }
                a.append(attribute("gen_ai.tool.call.arguments", .string(tool.arguments)))
                if let result = tool.result { a.append(attribute("gen_ai.tool.call.result", .string(result))) }
            }
            a += openInference(span)
            var status: JSONObject = [:]
            switch span.status {
            case .ok: status["code"] = .number(1)
            case .error(let message):
                status = ["code": .number(2), "message": .string(message)]
                a.append(attribute("error.type", .string(span.tool?.error ?? message)))
            case .unset: break
            }
            // Every other attribute the span holds (a local model's tokens, log-probabilities and
            // timings, the agent's provider and tools) as it is, so an export loses nothing the
            // trace view shows; what the mapping above wrote from the span's fields goes first.
            let written = Set(a.compactMap { $0["key"]?.string })
            for member in span.attributes where !written.contains(member.key) {
                a.append(.object(["key": .string(member.key), "value": anyValue(member.value)]))
            }
            var out: JSONObject = [
                "traceId": .string(traceID), "spanId": .string(hexID(span.spanID, digits: 16, scope: trace.externalID)),
                "name": .string(span.name),
                "kind": .number(span.kind == .llm ? 3 : 1), "startTimeUnixNano": .string(String(span.startNs)),
                "endTimeUnixNano": .string(String(span.endNs ?? span.startNs)), "attributes": .array(a),
                "status": .object(status),
            ]
            if let parent = span.parentID {
                out["parentSpanId"] = .string(hexID(parent, digits: 16, scope: trace.externalID))
            }
            return .object(out)
        }
        return .object([
            "resourceSpans": .array([
                .object([
                    "resource": .object([
                        "attributes": .array([
                            attribute("service.name", trace.metadata["service.name"] ?? .string("loupe"))
                        ])
                    ]),
                    "scopeSpans": .array([
                        .object(["scope": .object(["name": "loupe", "version": "1"]), "spans": .array(spans)])
                    ]),
                ])
            ])
        ])
    }

    // MARK: - OpenAI

    /// The conversation as the last model call saw it, its answer, and the tool results after it.
    static func conversation(_ trace: Trace) -> [Message] {
        let steps = trace.steps.map { trace.spans[$0] }
        guard let last = steps.lastIndex(where: { $0.kind == .llm }) else { return [] }
        var messages = steps[last].input + steps[last].output
        for span in steps[(last + 1)...] where span.kind == .tool {
            guard let tool = span.tool else { continue }
            messages.append(
                Message(role: "tool", text: tool.error.map { "error: \($0)" } ?? tool.result ?? "", toolCallID: tool.id)
            )
        }
        return messages
    }

    static func openai(_ trace: Trace) -> JSONValue {
        let messages: [JSONValue] = conversation(trace).map { m in
            var out: JSONObject = ["role": .string(m.role)]
            out["content"] = m.text.isEmpty && !m.toolCalls.isEmpty ? .null : .string(m.text)
            if !m.toolCalls.isEmpty {
                out["tool_calls"] = .array(
                    m.toolCalls.enumerated().map { i, call in
                        .object([
                            "id": .string(call.id ?? "call_\(i)"), "type": "function",
                            "function": .object(["name": .string(call.name), "arguments": .string(call.arguments)]),
                        ])
                    })
            }
            if let id = m.toolCallID { out["tool_call_id"] = .string(id) }
            return .object(out)
        }
        var out: JSONObject = ["messages": .array(messages)]
        if let tools = trace.metadata["tools"] { out["tools"] = tools }
        return .object(out)
    }

    // MARK: - ATIF

    static func isoTimestamp(_ ns: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(ns) / 1e9)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
            (c.nanosecond! + 500) / 1000)
    }

    /// ATIF v1.6: the opening system and user messages, then one agent step per model call with
    /// its tool calls and their results as the observation, per-step and final metrics.
    static func atif(_ trace: Trace) -> JSONValue {
        let ordered = trace.steps.map { trace.spans[$0] }
        var steps: [JSONValue] = []
        func add(_ fields: JSONObject) {
            var step = fields
            step["step_id"] = .number(Double(steps.count + 1))
            steps.append(.object(step))
        }
        let calls = ordered.enumerated().filter { $0.element.kind == .llm }
        if let first = calls.first?.element {
            for m in first.input where m.role == "system" || m.role == "user" || m.role == "developer" {
                add(["source": .string(m.role == "user" ? "user" : "system"), "message": .string(m.text)])
            }
        }
        var totals = (prompt: 0, completion: 0, cached: 0, cost: 0.0, costed: false)
        for (n, (index, call)) in calls.enumerated() {
            let next = n + 1 < calls.count ? calls[n + 1].offset : ordered.count
            let tools = ordered[(index + 1)..<next].filter { $0.kind == .tool }
            let output = call.output.first
            var step: JSONObject = ["source": "agent", "message": .string(output?.text ?? "")]
            if trace.timed { step["timestamp"] = .string(isoTimestamp(call.startNs)) }
            if let model = call.model { step["model_name"] = .string(model) }
            if let reasoning = output?.reasoning { step["reasoning_content"] = .string(reasoning) }
            let toolCalls = output?.toolCalls ?? []
            if !toolCalls.isEmpty {
                step["tool_calls"] = .array(
                    toolCalls.enumerated().map { i, c in
                        let arguments = (try? JSONValue.parse(c.arguments)).flatMap { $0.object != nil ? $0 : nil }
                        return .object([
                            "tool_call_id": .string(c.id ?? "call_\(n)_\(i)"), "function_name": .string(c.name),
                            "arguments": arguments ?? .object(["raw": .string(c.arguments)]),
                        ])
                    })
            }
            let results: [JSONValue] = tools.compactMap { span in
                guard let tool = span.tool else { return nil }
                var result: JSONObject = [
                    "content": .string(tool.error.map { "error: \($0)" } ?? tool.result ?? "")
                ]
                if let id = tool.id ?? toolCalls.first(where: { $0.name == tool.name })?.id {
                    result["source_call_id"] = .string(id)
                }
                return .object(result)
            }
            if !results.isEmpty { step["observation"] = .object(["results": .array(results)]) }
            var metrics: JSONObject = [:]
            if let v = call.usage.inputTokens {
                metrics["prompt_tokens"] = .number(Double(v))
                totals.prompt += v
            }
            if let v = call.usage.outputTokens {
                metrics["completion_tokens"] = .number(Double(v))
                totals.completion += v
            }
            if let v = call.usage.cacheReadTokens {
                metrics["cached_tokens"] = .number(Double(v))
                totals.cached += v
            }
            if let v = call.usage.cost {
                metrics["cost_usd"] = .number(v)
                totals.cost += v
                totals.costed = true
            }
            if !metrics.isEmpty { step["metrics"] = .object(metrics) }
            add(step)
        }
        var final: JSONObject = [
            "total_prompt_tokens": .number(Double(totals.prompt)),
            "total_completion_tokens": .number(Double(totals.completion)),
            "total_cached_tokens": .number(Double(totals.cached)), "total_steps": .number(Double(steps.count)),
        ]
        if totals.costed { final["total_cost_usd"] = .number(totals.cost) }
        var agent: JSONObject = ["name": .string(trace.name), "version": .string(trace.format.rawValue)]
        if let model = calls.lazy.compactMap(\.element.model).first { agent["model_name"] = .string(model) }
        return .object([
            "schema_version": "ATIF-v1.6", "session_id": .string(trace.externalID), "agent": .object(agent),
            "steps": .array(steps), "final_metrics": .object(final),
        ])
    }
}
