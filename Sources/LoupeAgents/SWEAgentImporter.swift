import Foundation
import LoupeBase

/// SWE-agent `.traj` files (the v0 layout and v1's `query`, `execution_time` and tool calls) and
/// mini-SWE-agent `.traj.json` files: one trajectory per file, each a root agent span with one
/// LLM span per model turn and one tool span per executed action.
package enum SWEAgentImporter {
    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch {
            throw TraceImportError(file: file, "not valid JSON: \(error)")
        }
        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            .replacingOccurrences(of: ".traj", with: "")
        if value["trajectory_format"]?.string?.hasPrefix("mini-swe-agent") == true
            || (value["messages"]?.array != nil && value["trajectory"] == nil)
        {
            return [try mini(value, id: stem, file: file)]
        }
        guard value["trajectory"] != nil else {
            throw TraceImportError(
                file: file, field: "trajectory", "missing: neither a SWE-agent nor a mini-SWE-agent file")
        }
        return [try sweAgent(value, id: stem, file: file)]
    }

    // MARK: mini-SWE-agent

    /// `messages[]` in chat shape with `extra` (actions, cost, timestamp, returncode); observations
    /// follow their assistant turn (role "user" in text mode, "tool" in tool-call mode); the last
    /// message has role "exit" and the exit status.
    private static func mini(_ value: JSONValue, id: String, file: String) throws(TraceImportError) -> Trace {
        guard let list = value["messages"]?.array else {
            throw TraceImportError(file: file, field: "messages", "missing or not an array")
        }
        let info = value["info"]
        let model = info?["config"]?["model"]?["model_name"]?.string
        var messages: [Message] = []
        var root = TraceSpan(
            spanID: "root", parentID: nil, kind: .agent, name: "mini-swe-agent", startNs: 0, endNs: nil)
        root.attributes["agent.type"] = info?["config"]?["agent_type"]
        root.attributes["mini_version"] = info?["mini_version"]
        var spans = [root]
        let timed = list.contains { $0["extra"]?["timestamp"]?.number != nil }
        var clock: Int64 = 0
        func nanoseconds(_ seconds: Double, _ index: Int) throws(TraceImportError) -> Int64 {
            do { return try CheckedNumber.nanoseconds(seconds: seconds, field: "extra.timestamp") } catch {
                throw TraceImportError(file: file, part: "messages[\(index)]", error.message)
            }
        }
        func time(_ item: JSONValue, _ index: Int) throws(TraceImportError) -> Int64 {
            if timed, let seconds = item["extra"]?["timestamp"]?.number { return try nanoseconds(seconds, index) }
            clock += 1
            return clock
        }
        var lastTime: Int64?
        var openTools: [Int] = []  // tool spans of the latest assistant turn, waiting for observations
        for (i, item) in list.enumerated() {
            guard let role = item["role"]?.string else {
                throw TraceImportError(file: file, part: "messages[\(i)]", field: "role", "missing")
            }
            let extra = item["extra"]
            switch role {
            case "assistant":
                let end = try time(item, i)
                guard var message = GenAIMessages.message(item) else { continue }
                message.role = "assistant"
                var llm = TraceSpan(
                    spanID: "m\(i)", parentID: "root", kind: .llm, name: "query", startNs: min(lastTime ?? end, end),
                    endNs: end)
                llm.model = model
                llm.input = messages
                do { llm.usage = try usage(extra) } catch {
                    throw TraceImportError(file: file, part: "messages[\(i)]", error.message)
                }
                llm.raw = item
                llm.status = .ok
                spans.append(llm)
                openTools = []
                let actions = extra?["actions"]?.array ?? []
                for (j, action) in actions.enumerated() {
                    let command = action["command"]?.string ?? action.compactJSON
                    let callID = action["tool_call_id"]?.string
                    let named = message.toolCalls.first { $0.id != nil && $0.id == callID }
                    let arguments = named?.arguments ?? JSONValue.object(["command": .string(command)]).compactJSON
                    var tool = TraceSpan(
                        spanID: "m\(i).a\(j)", parentID: "root", kind: .tool, name: named?.name ?? "bash",
                        startNs: end, endNs: end)
                    tool.tool = ToolCall(id: callID, name: named?.name ?? "bash", arguments: arguments)
                    tool.raw = action
                    openTools.append(spans.count)
                    spans.append(tool)
                }
                messages.append(message)
                lastTime = end
            case "exit":
                let status = extra?["exit_status"]?.string ?? "exit"
                // The submitting command ends the run instead of returning an observation.
                for index in openTools {
                    spans[index].status = .ok
                    spans[index].tool?.result = item["content"]?.string
                }
                openTools = []
                spans[0].status = status == "Submitted" ? .ok : .error(status)
                if let submission = extra?["submission"]?.string, !submission.isEmpty {
                    spans[0].output = [Message(role: "assistant", text: submission)]
                }
                if timed, let t = extra?["timestamp"]?.number { lastTime = try nanoseconds(t, i) }
            default:
                guard let message = GenAIMessages.message(item) else { continue }
                let isObservation = extra?["returncode"] != nil || role == "tool"
                if isObservation, !openTools.isEmpty {
                    let index = openTools.removeFirst()
                    let seconds = extra?["timestamp"]?.number
                    let end =
                        try seconds.map { (t) throws(TraceImportError) in timed ? try nanoseconds(t, i) : 0 }
                        ?? spans[index].startNs
                    spans[index].endNs = max(end, spans[index].startNs)
                    spans[index].tool?.result = message.text
                    let code = extra?["returncode"]?.int
                    let exception = extra?["exception_info"]?.string ?? ""
                    if !exception.isEmpty {
                        spans[index].tool?.error = exception
                        spans[index].status = .error(exception)
                    } else if let code, code != 0 {
                        spans[index].tool?.error = "exit code \(code)"
                        spans[index].status = .error("exit code \(code)")
                    } else {
                        spans[index].status = .ok
                    }
                    if let code { spans[index].attributes["returncode"] = .number(Double(code)) }
                    lastTime = spans[index].endNs
                } else if extra?["interrupt_type"]?.string == "FormatError", spans.count > 1 {
                    spans[spans.count - 1].status = .error("format error: " + firstLine(message.text))
                } else if role == "user" && messages.allSatisfy({ $0.role != "user" }) {
                    spans[0].name = taskName(message.text, instance: id)
                }
                messages.append(message)
            }
        }
        spans[0].startNs = spans.dropFirst().map(\.startNs).min() ?? 0
        spans[0].endNs = max(lastTime ?? 0, spans.compactMap(\.endNs).max() ?? 0)
        var trace = Trace(externalID: id, format: .sweAgent, name: spans[0].name, spans: spans)
        trace.timed = timed
        if let stats = info?["model_stats"] { trace.metadata["model_stats"] = stats }
        if let status = info?["exit_status"] { trace.metadata["exit_status"] = status }
        trace.metadata["trajectory_format"] = value["trajectory_format"] ?? .string("mini-swe-agent")
        return trace
    }

    private static func usage(_ extra: JSONValue?) throws(CheckedNumber.Failure) -> Usage {
        var usage = Usage(cost: extra?["cost"]?.number)
        // Model classes that keep the provider's response carry its usage block.
        if let u = extra?["response"]?["usage"] {
            usage.inputTokens = try Usage.tokenCount(u["prompt_tokens"], field: "extra.response.usage.prompt_tokens")
            usage.outputTokens = try Usage.tokenCount(
                u["completion_tokens"], field: "extra.response.usage.completion_tokens")
        }
        return usage
    }

    // MARK: SWE-agent

    /// `trajectory[]` steps (`thought`/`response`, `action`, `observation`, v1: `query`,
    /// `execution_time`) beside `history[]`, the conversation as the model saw it. Steps have
    /// no clock, so the trace is untimed; `execution_time` is kept on each tool span.
    private static func sweAgent(_ value: JSONValue, id: String, file: String) throws(TraceImportError) -> Trace {
        guard let steps = value["trajectory"]?.array else {
            throw TraceImportError(file: file, field: "trajectory", "not an array")
        }
        let history = (value["history"]?.array ?? []).compactMap { item -> Message? in
            guard var message = GenAIMessages.message(item) else { return nil }
            if message.toolCallID == nil { message.toolCallID = item["tool_call_ids"]?.array?.first?.string }
            if item["is_demo"]?.bool == true { message.name = "demo" }
            return message
        }
        let assistantTurns = history.indices.filter { history[$0].role == "assistant" && history[$0].name != "demo" }
        let info = value["info"]
        let stats = info?["model_stats"]
        let model = value["replay_config"].flatMap(config)?["agent"]?["model"]?["name"]?.string
        var root = TraceSpan(spanID: "root", parentID: nil, kind: .agent, name: "swe-agent", startNs: 0, endNs: nil)
        do {
            root.usage = Usage(
                inputTokens: try Usage.tokenCount(stats?["tokens_sent"], field: "info.model_stats.tokens_sent"),
                outputTokens: try Usage.tokenCount(
                    stats?["tokens_received"], field: "info.model_stats.tokens_received"),
                cost: stats?["instance_cost"]?.number)
        } catch { throw TraceImportError(file: file, error.message) }
        if let task = history.first(where: { $0.role == "user" && $0.name != "demo" }) {
            root.name = taskName(task.text, instance: id)
        }
        let exit = info?["exit_status"]?.string
        if let exit { root.status = exit.hasPrefix("submitted") ? .ok : .error(exit) }
        if let submission = info?["submission"]?.string, !submission.isEmpty {
            root.output = [Message(role: "assistant", text: submission)]
        }
        var spans = [root]
        var clock: Int64 = 0
        for (i, step) in steps.enumerated() {
            guard step.object != nil else {
                throw TraceImportError(file: file, part: "trajectory[\(i)]", "not an object")
            }
            let action = step["action"]?.string ?? ""
            let turn = i < assistantTurns.count ? assistantTurns[i] : nil
            clock += 1
            var llm = TraceSpan(
                spanID: "s\(i)", parentID: "root", kind: .llm, name: "query", startNs: clock, endNs: clock)
            llm.model = model
            if let query = step["query"]?.array {
                llm.input = query.compactMap(GenAIMessages.message)
            } else if let turn {
                llm.input = Array(history[..<turn])
            }
            var said = turn.map { history[$0] } ?? Message(role: "assistant", text: step["response"]?.string ?? "")
            said.reasoning = step["thought"]?.string.flatMap { $0 == said.text ? nil : $0 }
            llm.output = [said]
            llm.raw = step
            llm.status = .ok
            spans.append(llm)
            guard !action.isEmpty else { continue }
            clock += 1
            let call = said.toolCalls.first
            let name = call?.name ?? String(action.prefix { !$0.isWhitespace })
            var tool = TraceSpan(
                spanID: "s\(i).a", parentID: "root", kind: .tool, name: name, startNs: clock, endNs: clock)
            var executed = ToolCall(
                id: call?.id, name: name,
                arguments: call?.arguments ?? JSONValue.object(["command": .string(action)]).compactJSON)
            executed.result = step["observation"]?.string
            tool.tool = executed
            tool.status = .ok
            if let seconds = step["execution_time"] { tool.attributes["execution_time_s"] = seconds }
            spans.append(tool)
        }
        spans[0].endNs = clock
        var trace = Trace(externalID: id, format: .sweAgent, name: spans[0].name, spans: spans)
        trace.timed = false
        if let environment = value["environment"] { trace.metadata["environment"] = environment }
        if let exit { trace.metadata["exit_status"] = .string(exit) }
        if let stats { trace.metadata["model_stats"] = stats }
        return trace
    }

    /// `replay_config` is an object, or a JSON string holding one.
    private static func config(_ value: JSONValue) -> JSONValue? {
        if value.object != nil { return value }
        return value.string.flatMap { try? JSONValue.parse($0) }
    }

    /// What a run is about, as its list shows it: the task's first line past the agent's
    /// boilerplate ("We're currently solving the following issue within our repository. Here's
    /// the issue text: ISSUE: …", "Please solve this issue: …"), after the SWE-bench instance id
    /// when the file is named by one (`pydicom__pydicom-1458.traj`), so two runs of the same
    /// template on different issues are told apart.
    package static func taskName(_ text: String, instance: String) -> String {
        var task = Substring(text)
        if let issue = task.range(of: "ISSUE:") {
            task = task[issue.upperBound...]
        } else {
            for prefix in [
                "Please solve this issue: ", "We're currently solving the following issue within our repository. ",
                "We're currently solving the following issue: ", "Here's the issue text: ",
            ] where task.hasPrefix(prefix) {
                task = task.dropFirst(prefix.count)
            }
        }
        let line = firstLine(String(task).trimmingCharacters(in: .whitespacesAndNewlines))
        let isInstance = instance.contains("__") || instance.range(of: #"-\d+$"#, options: .regularExpression) != nil
        return isInstance ? instance + ": " + line : line
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", omittingEmptySubsequences: true).first?.prefix(80) ?? "")
    }
}
