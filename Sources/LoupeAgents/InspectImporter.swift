import Foundation
import LoupeBase

/// Inspect AI eval logs: the `.json` format (one `EvalLog`) and the `.eval` zip (`header.json`
/// plus one `samples/<id>_epoch_<n>.json` per sample, deflate or zstd). Each sample × epoch is a
/// trace: `span_begin`/`span_end` events become spans, `model` events LLM spans (their input from
/// `input` or, in the condensed layout, `input_refs` into `events_data.messages`; `attachment://`
/// references resolved), `tool` events tool spans, `score` events eval spans with the scores kept,
/// `error` events error spans.
package enum InspectImporter {
    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        if data.starts(with: [0x50, 0x4B]) { return try evalZip(data, file: file) }
        // A `.eval` log is always a zip; reading another one as JSON would report a JSON error
        // about bytes that were never meant to be JSON.
        if file.lowercased().hasSuffix(".eval") {
            throw TraceImportError(
                file: file,
                "not a zip archive (an Inspect .eval log is one; the file is \(data.isEmpty ? "empty" : "something else"))"
            )
        }
        let log: JSONValue
        do { log = try JSONValue.parse(data) } catch {
            throw TraceImportError(file: file, "not JSON (\(error))")
        }
        guard let spec = log["eval"]?.object else {
            throw TraceImportError(file: file, field: "eval", "missing: not an Inspect eval log")
        }
        let samples = log["samples"]?.array ?? []
        return try samples.enumerated().map { (i, sample) throws(TraceImportError) in
            try trace(sample, spec: spec, file: file, part: "samples[\(i)]")
        }
    }

    private static func evalZip(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        func read(_ archive: ZipArchive, _ member: ZipArchive.Member) throws(TraceImportError) -> JSONValue {
            do {
                return try parse(archive.contents(of: member), file: file, member: member.name)
            } catch let failure as ZipArchive.Failure {
                throw TraceImportError(file: file, part: failure.member, failure.message)
            } catch let error as TraceImportError {
                throw error
            } catch {
                throw TraceImportError(file: file, part: member.name, "\(error)")
            }
        }
        let archive: ZipArchive
        do { archive = try ZipArchive(data) } catch { throw TraceImportError(file: file, error.message) }
        guard let headerMember = archive.member(named: "header.json") ?? archive.member(named: "_journal/start.json")
        else { throw TraceImportError(file: file, "no header.json: not an Inspect .eval log") }
        guard let spec = try read(archive, headerMember)["eval"]?.object else {
            throw TraceImportError(file: file, part: headerMember.name, field: "eval", "missing")
        }
        var traces: [Trace] = []
        for member in archive.members where member.name.hasPrefix("samples/") && member.name.hasSuffix(".json") {
            traces.append(try trace(read(archive, member), spec: spec, file: file, part: member.name))
        }
        return traces
    }

    private static func parse(_ data: Data, file: String, member: String) throws(TraceImportError) -> JSONValue {
        do { return try JSONValue.parse(data) } catch {
            throw TraceImportError(file: file, part: member, "not JSON (\(error))")
        }
    }

    /// "2026-11-22T11:44:46.562450+00:00" → ns since 1970 (the offset applied); nil if it is not
    /// one; a failure naming `field` if it is a date outside what Int64 nanoseconds hold (years
    /// 1678 to 2261).
    package static func timestamp(_ text: String?, field: String = "timestamp") throws(CheckedNumber.Failure)
        -> Int64?
    {
        guard let text else { return nil }
        let u = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= u.count else { return nil }
            var v: Int64 = 0
            for b in u[from..<(from + count)] {
                guard b >= 48, b <= 57 else { return nil }
                v = v * 10 + Int64(b - 48)
            }
            return v
        }
        guard u.count >= 19, let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2)
        else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm); four-digit fields keep every
        // step here far inside Int64, only the step to nanoseconds can overflow.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
        var fraction: Int64 = 0
        var at = 19
        if at < u.count, u[at] == UInt8(ascii: ".") {
            at += 1
            var scale: Int64 = 100_000_000
            while at < u.count, u[at] >= 48, u[at] <= 57 {
                fraction += Int64(u[at] - 48) * scale
                scale /= 10
                at += 1
            }
        }
        var offset: Int64 = 0
        if at < u.count, u[at] == UInt8(ascii: "+") || u[at] == UInt8(ascii: "-"),
            let oh = digits(at + 1, 2), let om = digits(at + 4, 2)
        {
            offset = (oh * 60 + om) * 60 * (u[at] == UInt8(ascii: "+") ? -1 : 1)
        }
        do {
            let utc = try CheckedNumber.product(seconds + offset, 1_000_000_000, field: field)
            return try CheckedNumber.sum(utc, fraction, field: field)
        } catch {
            throw CheckedNumber.Failure(field: field, value: text, problem: "is outside the years 1678 to 2261")
        }
    }

    private static func trace(_ sample: JSONValue, spec: JSONObject, file: String, part: String)
        throws(TraceImportError) -> Trace
    {
        guard let id = sample["id"].map({ $0.string ?? $0.compactJSON }) else {
            throw TraceImportError(file: file, part: part, field: "id", "missing")
        }
        func checked<T>(_ body: () throws(CheckedNumber.Failure) -> T) throws(TraceImportError) -> T {
            do { return try body() } catch { throw TraceImportError(file: file, part: part, error.message) }
        }
        func time(_ value: JSONValue?, field: String) throws(TraceImportError) -> Int64? {
            try checked { () throws(CheckedNumber.Failure) in try timestamp(value?.string, field: field) }
        }
        func duration(_ value: JSONValue?, field: String) throws(TraceImportError) -> Int64? {
            guard let seconds = value?.number else { return nil }
            return try checked { () throws(CheckedNumber.Failure) in
                try CheckedNumber.nanoseconds(seconds: seconds, field: field)
            }
        }
        func after(_ start: Int64, _ duration: Int64?, field: String) throws(TraceImportError) -> Int64? {
            guard let duration else { return nil }
            return try checked { () throws(CheckedNumber.Failure) in
                try CheckedNumber.sum(start, duration, field: field)
            }
        }
        let epoch = sample["epoch"]?.int ?? 1
        let attachments = sample["attachments"]?.object ?? [:]
        func resolve(_ text: String) -> String {
            guard text.hasPrefix("attachment://") else { return text }
            return attachments[String(text.dropFirst("attachment://".count))]?.string ?? text
        }
        let pool = (sample["events_data"]?["messages"]?.array ?? []).map { message($0, resolve: resolve) }
        let events = sample["events"]?.array ?? []
        var firstEvent: Int64?
        for (index, event) in events.enumerated() {
            firstEvent = try time(event["timestamp"], field: "events[\(index)].timestamp")
            if firstEvent != nil { break }
        }
        let started = [try time(sample["started_at"], field: "started_at"), firstEvent].compactMap { $0 }.min() ?? 0
        // `??` with a throwing right side would rethrow untyped: the fallbacks are spelled out.
        var ended = try time(sample["completed_at"], field: "completed_at")
        if ended == nil {
            ended = try after(started, duration(sample["total_time"], field: "total_time"), field: "total_time")
        }
        let rootID = "sample"
        var root = TraceSpan(
            spanID: rootID, parentID: nil, kind: .agent,
            name: "\(spec["task"]?.string ?? "task") · \(id) · epoch \(epoch)",
            startNs: started, endNs: ended ?? started)
        root.model = spec["model"]?.string
        var spans = [root]
        var open: [String: Int] = [:]
        // Inspect wraps each tool event in a span of type "tool": the tool span stands for both,
        // so such a span is folded into its parent (events inside it attach there).
        var folded: [String: String] = [:]
        func owner(_ id: String?) -> String {
            var id = id ?? rootID
            while let parent = folded[id] { id = parent }
            return open[id] != nil ? id : rootID
        }
        var scores: [Score] = []
        for (index, event) in events.enumerated() {
            let kind = event["event"]?.string ?? ""
            let at = try time(event["timestamp"], field: "events[\(index)].timestamp") ?? started
            let parent = owner(event["span_id"]?.string)
            var completed = try time(event["completed"], field: "events[\(index)].completed")
            if completed == nil {
                let field = "events[\(index)].working_time"
                completed = try after(at, duration(event["working_time"], field: field), field: field)
            }
            switch kind {
            case "span_begin":
                guard let spanID = event["id"]?.string else {
                    throw TraceImportError(file: file, part: part, field: "events[\(index)].id", "missing")
                }
                let parentID = owner(event["parent_id"]?.string)
                let type = event["type"]?.string ?? ""
                if type == "tool" {
                    folded[spanID] = parentID
                    continue
                }
                var span = TraceSpan(
                    spanID: spanID, parentID: parentID, kind: type == "agent" ? .agent : .other,
                    name: event["name"]?.string ?? type, startNs: at, endNs: nil)
                span.attributes["inspect.span.type"] = .string(type)
                open[spanID] = spans.count
                spans.append(span)
            case "span_end":
                if let spanID = event["id"]?.string, let i = open[spanID] { spans[i].endNs = at }
            case "model":
                var span = TraceSpan(
                    spanID: event["uuid"]?.string ?? "model-\(index)", parentID: parent, kind: .llm,
                    name: event["model"]?.string ?? "model", startNs: at, endNs: completed)
                span.model =
                    event["output"]?["model"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? event["model"]?.string
                var input = (event["input"]?.array ?? []).map { message($0, resolve: resolve) }
                if input.isEmpty, let refs = event["input_refs"]?.array {
                    for ref in refs {
                        guard let range = ref.array, range.count == 2, let lo = range[0].int, let hi = range[1].int,
                            lo >= 0, lo <= hi, hi <= pool.count
                        else {
                            throw TraceImportError(
                                file: file, part: part, field: "events[\(index)].input_refs",
                                "\(ref.compactJSON) is outside events_data.messages (\(pool.count))")
                        }
                        input += pool[Int(lo)..<Int(hi)]
                    }
                }
                span.input = input
                span.output = (event["output"]?["choices"]?.array ?? []).compactMap { $0["message"] }.map {
                    message($0, resolve: resolve)
                }
                let usage = event["output"]?["usage"]
                func tokens(_ key: String) throws(TraceImportError) -> Int? {
                    try checked { () throws(CheckedNumber.Failure) in
                        try Usage.tokenCount(usage?[key], field: "events[\(index)].output.usage.\(key)")
                    }
                }
                span.usage = Usage(
                    inputTokens: try tokens("input_tokens"), outputTokens: try tokens("output_tokens"),
                    cacheReadTokens: try tokens("input_tokens_cache_read"),
                    cacheWriteTokens: try tokens("input_tokens_cache_write"),
                    reasoningTokens: try tokens("reasoning_tokens"),
                    cost: usage?["total_cost"]?.number)
                if let error = event["error"], !error.isNull { span.status = .error(error.text) }
                span.raw = event
                spans.append(span)
            case "tool":
                let function = event["function"]?.string ?? "tool"
                var span = TraceSpan(
                    spanID: event["uuid"]?.string ?? "tool-\(index)", parentID: parent, kind: .tool, name: function,
                    startNs: at, endNs: completed)
                var call = ToolCall(
                    id: event["id"]?.string, name: function, arguments: event["arguments"]?.compactJSON ?? "",
                    result: event["result"].map { resolve(GenAIMessages.partsText($0)) })
                if let error = event["error"], !error.isNull {
                    let message = error["message"]?.string ?? error.text
                    call.error = message
                    span.status = .error(message)
                }
                span.tool = call
                span.raw = event
                spans.append(span)
            case "score":
                let score = event["score"]
                let scorer = event["scorer"]?.string ?? "score"
                var span = TraceSpan(
                    spanID: event["uuid"]?.string ?? "score-\(index)", parentID: parent, kind: .eval,
                    name: "score \(scorer)",
                    startNs: at, endNs: at)
                span.raw = event
                span.attributes["score.value"] = score?["value"] ?? .null
                spans.append(span)
            case "sample_limit":
                // Inspect ended the sample at a limit: not an error (the sample is still scored),
                // but why it stopped, so it is a span of its own with the limit on it.
                let type = event["type"]?.string ?? "limit"
                var span = TraceSpan(
                    spanID: event["uuid"]?.string ?? "limit-\(index)", parentID: parent, kind: .other,
                    name: "\(type) limit reached", startNs: at, endNs: at)
                span.attributes["inspect.limit.type"] = .string(type)
                span.attributes["inspect.limit.value"] = event["limit"] ?? .null
                if let message = event["message"]?.string {
                    span.attributes["inspect.limit.message"] = .string(message)
                }
                span.raw = event
                spans.append(span)
            case "error":
                let message = event["error"]?["message"]?.string ?? event["error"]?.text ?? "error"
                var span = TraceSpan(
                    spanID: event["uuid"]?.string ?? "error-\(index)", parentID: parent, kind: .other, name: "error",
                    startNs: at, endNs: at)
                span.status = .error(message)
                span.raw = event
                spans.append(span)
            default: continue
            }
        }
        for (name, score) in sample["scores"]?.object ?? [:] {
            scores.append(
                Score(
                    scorer: name, value: score["value"] ?? .null, answer: score["answer"]?.string,
                    explanation: score["explanation"]?.string))
        }
        if let error = sample["error"], !error.isNull {
            spans[0].status = .error(error["message"]?.string ?? error.text)
        }
        // The limits the task ran under, and the one that stopped this sample.
        let config = spec["config"]
        for name in ["message_limit", "token_limit", "time_limit", "working_limit", "cost_limit"] {
            if let value = config?[name], value.number != nil { spans[0].attributes["inspect.\(name)"] = value }
        }
        if let limit = sample["limit"], let type = limit["type"]?.string {
            spans[0].attributes["inspect.limit.type"] = .string(type)
            spans[0].attributes["inspect.limit.value"] = limit["limit"] ?? .null
            if let reason = limit["reason"]?.string { spans[0].attributes["inspect.limit.message"] = .string(reason) }
        }
        let runID = spec["run_id"]?.string ?? spec["eval_id"]?.string ?? spec["task_id"]?.string ?? "run"
        var trace = Trace(
            externalID: "\(runID)/\(id)/\(epoch)", format: .inspect, name: spans[0].name,
            spans: OTLPImporter.treeOrder(spans))
        trace.scores = scores.sorted { $0.scorer < $1.scorer }
        trace.metadata["task"] = spec["task"] ?? .null
        trace.metadata["sample_id"] = sample["id"] ?? .null
        trace.metadata["epoch"] = .number(Double(epoch))
        trace.metadata["target"] = sample["target"] ?? .null
        trace.metadata["input"] = sample["input"].map { .string(GenAIMessages.partsText($0)) } ?? .null
        return trace
    }

    /// An Inspect chat message: content a string or parts (text, reasoning, tool_use, …);
    /// assistant tool calls with arguments as an object; tool results with an error.
    private static func message(_ value: JSONValue, resolve: (String) -> String) -> Message {
        var message = Message(role: value["role"]?.string ?? "", text: "")
        if let content = value["content"] {
            if let text = content.string {
                message.text = resolve(text)
            } else {
                var texts: [String] = []
                for part in content.array ?? [] {
                    switch part["type"]?.string {
                    case "reasoning":
                        message.reasoning = resolve(part["reasoning"]?.string ?? part["summary"]?.string ?? "")
                    case "text": texts.append(resolve(part["text"]?.string ?? ""))
                    default: if let text = part["text"]?.string { texts.append(resolve(text)) }
                    }
                }
                message.text = texts.joined(separator: "\n")
            }
        }
        message.toolCalls = (value["tool_calls"]?.array ?? []).map { call in
            var parsed = ToolCall(
                id: call["id"]?.string, name: call["function"]?.string ?? "",
                arguments: call["arguments"]?.compactJSON ?? "")
            if let problem = call["parse_error"]?.string { parsed.argumentsError = problem }
            return parsed
        }
        message.toolCallID = value["tool_call_id"]?.string
        if let error = value["error"], !error.isNull {
            message.text += (message.text.isEmpty ? "" : "\n") + "error: " + (error["message"]?.string ?? error.text)
        }
        return message
    }
}
