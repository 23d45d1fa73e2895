import Foundation
import LoupeBase

/// A span's content as the workspace stores it (JSON, read lazily): messages in and out, the
/// tool call, attributes. The numbers (times, tokens, status) live in columns.
package struct SpanPayload: Hashable, Sendable {
    package var input: [Message]
    package var output: [Message]
    package var tool: ToolCall?
    package var attributes: JSONObject

    package init(
        input: [Message] = [], output: [Message] = [], tool: ToolCall? = nil, attributes: JSONObject = [:]
    ) {
        self.input = input
        self.output = output
        self.tool = tool
        self.attributes = attributes
    }

    package init(_ span: TraceSpan) {
        self.init(input: span.input, output: span.output, tool: span.tool, attributes: span.attributes)
    }

    package var json: JSONValue {
        var members: JSONObject = [:]
        if !input.isEmpty { members["input"] = .array(input.map(Self.encode)) }
        if !output.isEmpty { members["output"] = .array(output.map(Self.encode)) }
        if let tool { members["tool"] = Self.encode(tool) }
        if !attributes.isEmpty { members["attributes"] = .object(attributes) }
        return .object(members)
    }

    package init(json: JSONValue) {
        self.init(
            input: (json["input"]?.array ?? []).map(Self.decodeMessage),
            output: (json["output"]?.array ?? []).map(Self.decodeMessage),
            tool: json["tool"].map(Self.decodeTool), attributes: json["attributes"]?.object ?? [:])
    }

    private static func encode(_ m: Message) -> JSONValue {
        var members: JSONObject = ["role": .string(m.role), "text": .string(m.text)]
        if let r = m.reasoning { members["reasoning"] = .string(r) }
        if !m.toolCalls.isEmpty { members["tool_calls"] = .array(m.toolCalls.map(encode)) }
        if let id = m.toolCallID { members["tool_call_id"] = .string(id) }
        if let name = m.name { members["name"] = .string(name) }
        return .object(members)
    }

    private static func encode(_ t: ToolCall) -> JSONValue {
        var members: JSONObject = ["name": .string(t.name), "arguments": .string(t.arguments)]
        if let id = t.id { members["id"] = .string(id) }
        if let e = t.argumentsError { members["arguments_error"] = .string(e) }
        if let r = t.result { members["result"] = .string(r) }
        if let e = t.error { members["error"] = .string(e) }
        return .object(members)
    }

    private static func decodeMessage(_ v: JSONValue) -> Message {
        var m = Message(
            role: v["role"]?.string ?? "", text: v["text"]?.string ?? "",
            toolCalls: (v["tool_calls"]?.array ?? []).map(decodeTool), toolCallID: v["tool_call_id"]?.string)
        m.reasoning = v["reasoning"]?.string
        m.name = v["name"]?.string
        return m
    }

    private static func decodeTool(_ v: JSONValue) -> ToolCall {
        var t = ToolCall(
            id: v["id"]?.string, name: v["name"]?.string ?? "", arguments: "", result: v["result"]?.string,
            error: v["error"]?.string)
        // Stored arguments keep the source's text and its verdict, without parsing again.
        t.arguments = v["arguments"]?.string ?? ""
        t.argumentsError = v["arguments_error"]?.string
        return t
    }
}
