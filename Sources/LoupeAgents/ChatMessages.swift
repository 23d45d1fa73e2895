import Foundation
import LoupeBase

/// OpenAI chat-completions message lists: a JSON object `{"messages", "tools"}`, a bare array
/// of messages, or JSON Lines of objects (fine-tuning style). A conversation has an order but no
/// clock, so it becomes an untimed trace: a root agent span, one LLM span per assistant turn
/// (its input: the conversation so far) and one tool span per tool call with its result.
package enum ChatMessages {
    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        let values = try JSONLines.values(data, file: file)
        if values.count == 1, values[0].line == 0 {
            let whole = values[0].value
            let list = whole.array.map { items in items.allSatisfy { $0["role"] != nil } ? [whole] : items } ?? [whole]
            return try list.enumerated().map { (i, value) throws(TraceImportError) in
                try trace(
                    value, id: list.count == 1 ? stem : "\(stem)#\(i + 1)", at: SourceLocation(file: file),
                    part: list.count == 1 ? nil : "item \(i + 1)")
            }
        }
        return try values.map { (line, value) throws(TraceImportError) in
            try trace(value, id: "\(stem):\(line)", at: SourceLocation(file: file, line: line), part: nil)
        }
    }

    /// Chat-completions `tool_calls` (arguments a JSON string, kept raw) or the legacy
    /// `function_call`.
    static func toolCalls(_ value: JSONValue?) -> [ToolCall] {
        guard let value else { return [] }
        let calls = value.array ?? (value.object != nil ? [value] : [])
        return calls.compactMap { call in
            let function = call["function"] ?? call
            guard let name = function["name"]?.string else { return nil }
            let arguments = function["arguments"] ?? function["input"]
            return ToolCall(
                id: call["id"]?.string, name: name, arguments: arguments?.string ?? arguments?.compactJSON ?? "")
        }
    }

    private static func trace(_ value: JSONValue, id: String, at location: SourceLocation, part: String?)
        throws(TraceImportError) -> Trace
    {
        let list = value.array ?? value["messages"]?.array
        guard let list else {
            throw TraceImportError(at: location, part: part, field: "messages", "missing: not a message list")
        }
        var messages: [Message] = []
        for (i, item) in list.enumerated() {
            guard item["role"]?.string != nil else {
                throw TraceImportError(at: location, part: part, field: "messages[\(i)].role", "missing")
            }
            var message = GenAIMessages.message(item)!
            if message.toolCalls.isEmpty, let call = item["function_call"] { message.toolCalls = toolCalls(call) }
            messages.append(message)
        }
        let rootID = "root"
        var root = TraceSpan(spanID: rootID, parentID: nil, kind: .agent, name: "conversation", startNs: 0, endNs: nil)
        root.raw = value
        var spans = [root]
        var clock: Int64 = 0
        let results = Dictionary(
            messages.compactMap { m in m.toolCallID.map { ($0, m.text) } }, uniquingKeysWith: { a, _ in a })
        for (i, message) in messages.enumerated() where message.role == "assistant" {
            clock += 1
            var llm = TraceSpan(
                spanID: "m\(i)", parentID: rootID, kind: .llm, name: "chat", startNs: clock, endNs: clock)
            llm.input = Array(messages[..<i])
            llm.output = [message]
            llm.raw = list[i]
            llm.model = list[i]["model"]?.string ?? value["model"]?.string
            spans.append(llm)
            for (j, call) in message.toolCalls.enumerated() {
                clock += 1
                var tool = TraceSpan(
                    spanID: "m\(i).t\(j)", parentID: rootID, kind: .tool, name: call.name, startNs: clock, endNs: clock)
                var executed = call
                executed.result = call.id.flatMap { results[$0] }
                tool.tool = executed
                spans.append(tool)
            }
        }
        spans[0].endNs = clock
        if let first = messages.first(where: { $0.role == "user" }) {
            spans[0].name = String(first.text.prefix(80)).replacingOccurrences(of: "\n", with: " ")
        }
        var trace = Trace(externalID: id, format: .openai, name: spans[0].name, spans: spans)
        trace.timed = false
        if let tools = value["tools"] { trace.metadata["tools"] = tools }
        return trace
    }
}
