import Foundation
import LoupeBase

/// The messages of an LLM span, from whichever generation of the conventions wrote them:
/// `gen_ai.input.messages` / `gen_ai.output.messages` (+ `gen_ai.system_instructions`), on the
/// span or on a `gen_ai.client.inference.operation.details` event; the older per-message events
/// (`gen_ai.user.message`, …, `gen_ai.choice`); OpenInference's flattened
/// `llm.input_messages.{i}.message.*`; Traceloop's `gen_ai.prompt.{i}.*`.
enum GenAIMessages {
    static func messages(attributes: JSONObject, events: [(name: String, attributes: JSONObject)])
        -> (input: [Message], output: [Message])
    {
        let details = events.first { $0.name == "gen_ai.client.inference.operation.details" }?.attributes ?? [:]
        let merged = details.isEmpty ? attributes : attributes.merging(details) { current, _ in current }
        var input = structured(merged["gen_ai.input.messages"])
        var output = structured(merged["gen_ai.output.messages"])
        if let system = merged["gen_ai.system_instructions"] {
            input.insert(Message(role: "system", text: partsText(system)), at: 0)
        }
        if input.isEmpty && output.isEmpty { (input, output) = legacyEvents(events) }
        if input.isEmpty && output.isEmpty {
            input = flattened(attributes, prefix: "llm.input_messages", inner: ".message")
            output = flattened(attributes, prefix: "llm.output_messages", inner: ".message")
        }
        if input.isEmpty && output.isEmpty {
            input = flattened(attributes, prefix: "gen_ai.prompt", inner: "")
            output = flattened(attributes, prefix: "gen_ai.completion", inner: "")
        }
        return (input, output)
    }

    /// A messages attribute: an array, or a JSON string holding one.
    private static func structured(_ value: JSONValue?) -> [Message] {
        guard let value else { return [] }
        var list = value.array
        if list == nil, let text = value.string, let parsed = try? JSONValue.parse(text) { list = parsed.array }
        return (list ?? []).compactMap(message)
    }

    /// `{role, parts[]}` (GenAI) or `{role, content, tool_calls}` (chat-completions shape).
    static func message(_ value: JSONValue) -> Message? {
        guard let role = value["role"]?.string else { return nil }
        var message = Message(role: role, text: "")
        if let parts = value["parts"]?.array {
            var texts: [String] = []
            for part in parts {
                switch part["type"]?.string {
                case "text": texts.append(part["content"]?.text ?? "")
                case "reasoning", "thinking":
                    message.reasoning = [message.reasoning, part["content"]?.text].compactMap { $0 }.joined(
                        separator: "\n")
                case "tool_call":
                    message.toolCalls.append(
                        ToolCall(
                            id: part["id"]?.string, name: part["name"]?.string ?? "",
                            arguments: part["arguments"]?.text ?? ""))
                case "tool_call_response":
                    message.toolCallID = part["id"]?.string
                    texts.append(part["result"]?.text ?? part["response"]?.text ?? "")
                default:
                    if let content = part["content"] { texts.append(content.text) }
                }
            }
            message.text = texts.joined(separator: "\n")
        } else {
            message.text = value["content"].map(partsText) ?? ""
            message.toolCalls = ChatMessages.toolCalls(value["tool_calls"])
            message.toolCallID = (value["tool_call_id"] ?? value["id"])?.string
        }
        if let name = value["name"]?.string { message.name = name }
        return message
    }

    /// Text of a content value: a string, or parts with text/content.
    static func partsText(_ value: JSONValue) -> String {
        if let s = value.string {
            // Instrumentations put structured content in string attributes as JSON text.
            if s.hasPrefix("["), let parsed = try? JSONValue.parse(s), parsed.array != nil { return partsText(parsed) }
            return s
        }
        if let parts = value.array {
            return parts.compactMap { part -> String? in
                if let s = part.string { return s }
                return (part["content"] ?? part["text"])?.text
            }.joined(separator: "\n")
        }
        return value.isNull ? "" : value.compactJSON
    }

    private static func legacyEvents(_ events: [(name: String, attributes: JSONObject)]) -> (
        [Message], [Message]
    ) {
        var input: [Message] = []
        var output: [Message] = []
        for event in events {
            let a = event.attributes
            switch event.name {
            case "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message":
                let role = String(event.name.dropFirst("gen_ai.".count).dropLast(".message".count))
                var message = Message(role: a["role"]?.string ?? role, text: a["content"].map(partsText) ?? "")
                message.toolCalls = ChatMessages.toolCalls(a["tool_calls"])
                if role == "tool" { message.toolCallID = a["id"]?.string }
                input.append(message)
            case "gen_ai.choice":
                // The message is an object, or a JSON string holding one.
                let body =
                    a["message"]?.object ?? a["message"]?.string.flatMap { try? JSONValue.parse($0) }?.object ?? a
                var message = Message(role: "assistant", text: body["content"].map(partsText) ?? "")
                message.toolCalls = ChatMessages.toolCalls(body["tool_calls"] ?? a["tool_calls"])
                output.append(message)
            default: break
            }
        }
        return (input, output)
    }

    /// `prefix.{i}{inner}.role` / `.content` (and OpenInference's `.tool_calls.{j}.tool_call.*`).
    private static func flattened(_ a: JSONObject, prefix: String, inner: String) -> [Message] {
        var messages: [Message] = []
        var i = 0
        while let role = a["\(prefix).\(i)\(inner).role"]?.string {
            var message = Message(role: role, text: a["\(prefix).\(i)\(inner).content"]?.text ?? "")
            var j = 0
            let call = "\(prefix).\(i)\(inner).tool_calls"
            while let name = a["\(call).\(j).tool_call.function.name"]?.string {
                message.toolCalls.append(
                    ToolCall(
                        id: a["\(call).\(j).tool_call.id"]?.string, name: name,
                        arguments: a["\(call).\(j).tool_call.function.arguments"]?.text ?? ""))
                j += 1
            }
            messages.append(message)
            i += 1
        }
        return messages
    }
}
