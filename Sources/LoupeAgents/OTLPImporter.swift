import Foundation
import LoupeBase

/// OTLP/JSON traces: one `ExportTraceServiceRequest` body, or JSON Lines of them as file
/// exporters write (a trace may span lines; children usually come before parents). Reads the
/// OpenTelemetry GenAI conventions — both the current attributes (`gen_ai.input.messages`, …)
/// and the older per-message events — and the OpenInference dialect.
package enum OTLPImporter {
    /// One span of an OTLP request, read into the trace model, with the trace it belongs to.
    package struct OTLPSpan: Hashable, Sendable {
        /// 32 lower-case hex digits.
        package var traceID: String
        package var span: TraceSpan
        /// The resource's `service.name`.
        package var service: String?
        /// The evaluation results its events carry (`gen_ai.evaluation.result`).
        package var scores: [Score]

        package init(traceID: String, span: TraceSpan, service: String?, scores: [Score] = []) {
            self.traceID = traceID
            self.span = span
            self.service = service
            self.scores = scores
        }
    }

    /// What the mapping reads of one OTLP span, whichever encoding it came in: the JSON one
    /// (``spans(in:file:line:)``) and the protobuf one (`LoupeOTLP`, straight from the generated
    /// message, with no JSON in between) fill it the same way.
    package struct SpanParts: Sendable {
        package typealias Event = (name: String, attributes: JSONObject)

        /// Hex digits, as written (checked and lower-cased by the mapping).
        package var traceID: String
        package var spanID: String
        package var parentID: String?
        package var name: String
        package var startNs: Int64
        package var endNs: Int64?
        /// Plain JSON values (``anyValue(_:)``'s reading of OTLP's `AnyValue`).
        package var attributes: JSONObject
        package var events: [Event]
        /// OTLP's status code: 0 unset, 1 ok, 2 error.
        package var statusCode: Int
        package var statusMessage: String?

        package init(
            traceID: String, spanID: String, parentID: String?, name: String, startNs: Int64, endNs: Int64?,
            attributes: JSONObject, events: [Event], statusCode: Int, statusMessage: String?
        ) {
            self.traceID = traceID
            self.spanID = spanID
            self.parentID = parentID
            self.name = name
            self.startNs = startNs
            self.endNs = endNs
            self.attributes = attributes
            self.events = events
            self.statusCode = statusCode
            self.statusMessage = statusMessage
        }
    }

    /// Traces in `data`, grouped by trace id, in the order each trace first appears. Lines are
    /// parsed and turned into spans on every core, then grouped. A span that cannot be read
    /// stops the import, naming its line and place.
    package static func traces(_ data: Data, file: String) throws(TraceImportError) -> [Trace] {
        let perLine: [[OTLPSpan]] = try JSONLines.map(data, file: file) {
            (number, body) throws(TraceImportError) -> [OTLPSpan] in
            let request = try Self.spans(in: body, file: file, line: number == 0 ? nil : number)
            if let first = request.rejected.first { throw first }
            return request.read
        }
        var order: [String] = []
        var spans: [String: [OTLPSpan]] = [:]
        var services: [String: String] = [:]
        for found in perLine.joined() {
            if spans[found.traceID] == nil {
                order.append(found.traceID)
                if let service = found.service { services[found.traceID] = service }
            }
            spans[found.traceID, default: []].append(found)
        }
        return order.map { trace(id: $0, spans: spans[$0]!, service: services[$0]) }
    }

    /// The spans of one `ExportTraceServiceRequest` in its JSON form (a file's line, a request
    /// body, a protobuf request turned into JSON): those read, and for each one that could not
    /// be, where it is and what is wrong — OTLP's partial success. A body that is not a request
    /// at all throws.
    package static func spans(
        in body: JSONValue, file: String, line: Int?
    ) throws(TraceImportError) -> (read: [OTLPSpan], rejected: [TraceImportError]) {
        guard let list = body["resourceSpans"] ?? body["resource_spans"] else {
            throw TraceImportError(
                file: file, line: line, field: "resourceSpans", "missing: not an OTLP trace export")
        }
        func fail(_ field: String, _ value: JSONValue, _ expected: String) -> TraceImportError {
            TraceImportError(file: file, line: line, field: field, "is \(value.kindName), not \(expected)")
        }
        // A value of the wrong type where the request's structure is (proto3 JSON's parse error)
        // makes the whole body no request: its spans cannot be told apart, let alone named.
        func elements(_ value: JSONValue?, field: String, of expected: String) throws(TraceImportError) -> [JSONValue] {
            guard let value, value != .null else { return [] }
            guard let items = value.array else { throw fail(field, value, "a list") }
            for (index, item) in items.enumerated() where item.object == nil {
                throw fail("\(field)[\(index)]", item, expected)
            }
            return items
        }
        let resourceSpans = try elements(list, field: "resourceSpans", of: "a ResourceSpans object")
        var read: [OTLPSpan] = []
        var rejected: [TraceImportError] = []
        for (r, resource) in resourceSpans.enumerated() {
            let service = attributes(resource["resource"]?["attributes"])["service.name"]?.string
            let scopes = try elements(
                resource["scopeSpans"] ?? resource["scope_spans"], field: "resourceSpans[\(r)].scopeSpans",
                of: "a ScopeSpans object")
            for (s, scope) in scopes.enumerated() {
                let spans = try elements(
                    scope["spans"], field: "resourceSpans[\(r)].scopeSpans[\(s)].spans", of: "a Span object")
                for (i, raw) in spans.enumerated() {
                    do {
                        read.append(
                            try span(
                                raw, service: service, file: file, line: line,
                                path: "resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]"))
                    } catch {
                        rejected.append(error)
                    }
                }
            }
        }
        return (read, rejected)
    }

    /// One OTLP/JSON span of a request whose resource is `service`, at `path` in it.
    static func span(
        _ raw: JSONValue, service: String?, file: String, line: Int?, path: String
    ) throws(TraceImportError) -> OTLPSpan {
        var found = try span(parts(raw, file: file, line: line, path: path), file: file, line: line, path: path)
        found.span.raw = raw
        found.service = service
        return found
    }

    /// The spans of one `ExportTraceServiceRequest` in its JSON form too large to parse whole (a
    /// file's line of 50,000 spans, a pretty-printed export of hundreds of MB): its structure is
    /// walked without building it, and each span's bytes are parsed on their own, on every core,
    /// and handed to `transform` in order; a span's tree is dropped as soon as `transform` is done
    /// with it. Reads what ``spans(in:file:line:)`` reads; the first span that cannot be read
    /// throws, naming its path.
    package static func largeRequest<R: Sendable>(
        _ bytes: [UInt8], in range: Range<Int>? = nil, file: String, line: Int?,
        _ transform: @Sendable (OTLPSpan) -> R
    ) throws(TraceImportError) -> [R] {
        let range = range ?? bytes.indices
        var jobs: [LargeRequestSpan] = []
        var services: [String?] = []
        let walked: Result<Bool, JSONSyntaxError> = bytes.withUnsafeBufferPointer { whole in
            let buffer = UnsafeBufferPointer(rebasing: whole[range])
            let scanner = JSONScanner(buffer)
            var found = false
            do throws(JSONSyntaxError) {
                let end = try scanner.forEachMember(of: 0) { (key, value) throws(JSONSyntaxError) -> Int? in
                    guard key == "resourceSpans" || key == "resource_spans" else { return nil }
                    found = true
                    return try scanner.forEachElement(of: value) { (r, resource) throws(JSONSyntaxError) -> Int? in
                        services.append(nil)
                        return try scanner.forEachMember(of: resource) { (key, value) throws(JSONSyntaxError) -> Int? in
                            if key == "resource" {
                                let end = try scanner.skipValue(value)
                                if case .success(let parsed) = JSONValue.parse(
                                    bytes: UnsafeBufferPointer(rebasing: buffer[value..<end]))
                                {
                                    services[r] = attributes(parsed["attributes"])["service.name"]?.string
                                }
                                return end
                            }
                            guard key == "scopeSpans" || key == "scope_spans" else { return nil }
                            return try scanner.forEachElement(of: value) { (s, scope) throws(JSONSyntaxError) -> Int? in
                                try scanner.forEachMember(of: scope) { (key, value) throws(JSONSyntaxError) -> Int? in
                                    guard key == "spans" else { return nil }
                                    return try scanner.forEachElement(of: value) {
                                        (i, span) throws(JSONSyntaxError) -> Int? in
                                        let end = try scanner.skipValue(span)
                                        jobs.append(
                                            LargeRequestSpan(
                                                range: span..<end, resource: r,
                                                path: "resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]"))
                                        return end
                                    }
                                }
                            }
                        }
                    }
                }
                let rest = scanner.skipWhitespace(end)
                if rest < buffer.count { throw scanner.error("unexpected text after the request", rest) }
                return .success(found)
            } catch {
                return .failure(error)
            }
        }
        switch walked {
        case .failure(let error): throw TraceImportError(file: file, line: line, "not JSON (\(error))")
        case .success(false):
            throw TraceImportError(
                file: file, line: line, field: "resourceSpans", "missing: not an OTLP trace export")
        case .success(true): break
        }
        let resolved = services
        return try parallelMap(jobs) { (job) throws(TraceImportError) -> R in
            let within = (range.lowerBound + job.range.lowerBound)..<(range.lowerBound + job.range.upperBound)
            let parsed = bytes.withUnsafeBufferPointer {
                JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: $0[within]))
            }
            switch parsed {
            case .success(let raw):
                return transform(
                    try span(raw, service: resolved[job.resource], file: file, line: line, path: job.path))
            case .failure(let error):
                throw TraceImportError(file: file, line: line, field: job.path, "not JSON (\(error))")
            }
        }
    }

    /// Where a span of a large request is: its bytes, its resource, its path.
    private struct LargeRequestSpan: Sendable {
        var range: Range<Int>
        var resource: Int
        var path: String
    }

    /// One span read again from the OTLP/JSON it was stored as (`TraceSpan.raw`), as a trace
    /// that grows over many requests is put together again with its new spans.
    package static func span(stored raw: JSONValue, file: String) throws(TraceImportError) -> OTLPSpan {
        var found = try span(parts(raw, file: file, line: nil, path: "span"), file: file, line: nil, path: "span")
        found.span.raw = raw
        return found
    }

    /// A trace from its spans in any order: tree order, the name Loupe exported it under or the
    /// root's (else the service's, else the id), the service, and the evaluation scores its
    /// spans' events carry.
    package static func trace(id: String, spans: [OTLPSpan], service: String?) -> Trace {
        let ordered = treeOrder(spans.map(\.span))
        let root = ordered.first { $0.parentID == nil }
        let name = root?.attributes["loupe.trace.name"]?.string ?? root?.name ?? service ?? id
        var trace = Trace(externalID: id, format: .otlp, name: name, spans: ordered)
        if let service { trace.metadata["service.name"] = .string(service) }
        var scores: [String: [Score]] = [:]
        // One span per id, as the tree keeps: a span sent twice (an exporter's retry) scores once.
        for span in spans where !span.scores.isEmpty && scores[span.span.spanID] == nil {
            scores[span.span.spanID] = span.scores
        }
        if !scores.isEmpty { trace.scores = ordered.flatMap { scores[$0.spanID] ?? [] } }
        return trace
    }

    /// An OTLP `KeyValue[]` list as a dictionary of plain JSON values.
    static func attributes(_ list: JSONValue?) -> JSONObject {
        var members: [JSONObject.Element] = []
        for item in list?.array ?? [] {
            guard let key = item["key"]?.string else { continue }
            members.append((key, anyValue(item["value"])))
        }
        // Sorted once; of a key given twice, the last is kept.
        return JSONObject(parsed: members)
    }

    /// OTLP's `AnyValue` as plain JSON (int64s arrive as decimal strings; kept as numbers).
    package static func anyValue(_ value: JSONValue?) -> JSONValue {
        guard let value, let members = value.object else { return .null }
        if let s = members["stringValue"] ?? members["string_value"] { return s }
        if let b = members["boolValue"] ?? members["bool_value"] { return b }
        if let i = members["intValue"] ?? members["int_value"] { return i.int.map { .number(Double($0)) } ?? i }
        // A non-finite double (OTLP/JSON writes "NaN", "Infinity") stays the string it was.
        if let d = members["doubleValue"] ?? members["double_value"] {
            return d.number.flatMap { $0.isFinite ? JSONValue.number($0) : nil } ?? d
        }
        if let b = members["bytesValue"] ?? members["bytes_value"] { return b }
        if let a = members["arrayValue"] ?? members["array_value"] {
            return .array((a["values"]?.array ?? []).map { anyValue($0) })
        }
        if let kv = members["kvlistValue"] ?? members["kvlist_value"] {
            return .object(attributes(kv["values"]))
        }
        return .null
    }

    private static func isHex(_ s: String, length: Int) -> Bool {
        s.utf8.count == length
            && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }

    /// What the mapping reads of an OTLP/JSON span; a field it needs that is missing or of the
    /// wrong type is named by its path.
    private static func parts(
        _ raw: JSONValue, file: String, line: Int?, path: String
    ) throws(TraceImportError) -> SpanParts {
        func fail(_ field: String, _ message: String) -> TraceImportError {
            TraceImportError(file: file, line: line, field: "\(path).\(field)", message)
        }
        guard let traceID = (raw["traceId"] ?? raw["trace_id"])?.string else { throw fail("traceId", "missing") }
        guard let spanID = (raw["spanId"] ?? raw["span_id"])?.string else { throw fail("spanId", "missing") }
        guard let start = (raw["startTimeUnixNano"] ?? raw["start_time_unix_nano"])?.int else {
            throw fail("startTimeUnixNano", "missing or not an integer")
        }
        let code = raw["status"]?["code"]
        return SpanParts(
            traceID: traceID, spanID: spanID,
            parentID: (raw["parentSpanId"] ?? raw["parent_span_id"])?.string.flatMap { $0.isEmpty ? nil : $0 },
            name: raw["name"]?.string ?? "", startNs: start,
            endNs: (raw["endTimeUnixNano"] ?? raw["end_time_unix_nano"])?.int,
            attributes: attributes(raw["attributes"]),
            events: (raw["events"]?.array ?? []).map {
                (name: $0["name"]?.string ?? "", attributes: Self.attributes($0["attributes"]))
            },
            statusCode: code?.int.map { Int($0) }
                ?? (code?.string == "STATUS_CODE_ERROR" ? 2 : code?.string == "STATUS_CODE_OK" ? 1 : 0),
            statusMessage: raw["status"]?["message"]?.string)
    }

    /// One span read into the trace model, with the trace it belongs to and the evaluation
    /// results its events carry. Ids of the wrong length, and token counts that are no counts,
    /// are named by `path`.
    package static func span(
        _ parts: SpanParts, file: String, line: Int?, path: @autoclosure () -> String
    ) throws(TraceImportError) -> OTLPSpan {
        func fail(_ field: String, _ message: String) -> TraceImportError {
            TraceImportError(file: file, line: line, field: "\(path()).\(field)", message)
        }
        let traceID = parts.traceID
        guard isHex(traceID, length: 32) else { throw fail("traceId", "\"\(traceID)\" is not 32 hex digits") }
        let spanID = parts.spanID
        guard isHex(spanID, length: 16) else { throw fail("spanId", "\"\(spanID)\" is not 16 hex digits") }
        let attributes = parts.attributes
        let events = parts.events
        var span = TraceSpan(
            spanID: spanID, parentID: parts.parentID, kind: kind(attributes), name: parts.name,
            startNs: parts.startNs, endNs: parts.endNs)
        span.attributes = attributes
        span.model =
            (attributes["gen_ai.response.model"] ?? attributes["gen_ai.request.model"]
            ?? attributes["llm.model_name"])?.string
        do { span.usage = try usage(attributes) } catch { throw fail(error.field, "\(error.value) \(error.problem)") }
        (span.input, span.output) = GenAIMessages.messages(attributes: attributes, events: events)
        span.tool = tool(attributes, kind: span.kind)
        span.attributes = withoutContent(attributes, span: span)
        let exception = events.first { $0.name == "exception" }?.attributes
        if parts.statusCode == 2 || attributes["error.type"] != nil {
            let message = [
                parts.statusMessage, attributes["error.type"]?.string, exception?["exception.message"]?.string,
            ].compactMap { $0 }.first { !$0.isEmpty }
            span.status = .error(message ?? "error")
            if span.tool != nil, span.tool?.error == nil { span.tool?.error = message ?? "error" }
        } else if parts.statusCode == 1 {
            span.status = .ok
        }
        return OTLPSpan(traceID: traceID.lowercased(), span: span, service: nil, scores: evaluationScores(events))
    }

    private static func kind(_ a: JSONObject) -> SpanKind {
        if let own = a["loupe.span.kind"]?.string.flatMap(SpanKind.init(rawValue:)) { return own }
        switch a["gen_ai.operation.name"]?.string {
        case "chat", "generate_content", "text_completion", "completion": return .llm
        case "embeddings": return .embedding
        case "retrieval": return .retrieval
        case "execute_tool": return .tool
        case "invoke_agent", "create_agent", "invoke_workflow": return .agent
        default: break
        }
        switch a["openinference.span.kind"]?.string?.uppercased() {
        case "LLM": return .llm
        case "TOOL": return .tool
        case "AGENT", "CHAIN": return .agent
        case "RETRIEVER", "RERANKER": return .retrieval
        case "EMBEDDING": return .embedding
        case "EVALUATOR", "GUARDRAIL": return .eval
        default: break
        }
        if a["gen_ai.tool.name"] != nil || a["tool.name"] != nil { return .tool }
        if a["gen_ai.request.model"] != nil || a["gen_ai.system"] != nil { return .llm }
        return .other
    }

    private static func usage(_ a: JSONObject) throws(CheckedNumber.Failure) -> Usage {
        func int(_ keys: String...) throws(CheckedNumber.Failure) -> Int? {
            guard let key = keys.first(where: { a[$0]?.int != nil }) else { return nil }
            return try Usage.tokenCount(a[key], field: "attributes.\(key)")
        }
        return Usage(
            inputTokens: try int("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
            outputTokens: try int(
                "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
            cacheReadTokens: try int(
                "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                "llm.token_count.prompt_details.cache_read"),
            cacheWriteTokens: try int(
                "gen_ai.usage.cache_creation.input_tokens", "llm.token_count.prompt_details.cache_write"),
            reasoningTokens: try int(
                "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning"),
            cost: a["llm.cost.total"]?.number ?? a["gen_ai.usage.cost"]?.number)
    }

    private static func tool(_ a: JSONObject, kind: SpanKind) -> ToolCall? {
        guard kind == .tool, let name = (a["gen_ai.tool.name"] ?? a["tool.name"])?.string else { return nil }
        // OpenInference's `tool.parameters` is the tool's schema, not the call's arguments: those
        // are its `input.value`.
        let arguments = a["gen_ai.tool.call.arguments"] ?? a["input.value"]
        let result = a["gen_ai.tool.call.result"] ?? a["output.value"]
        return ToolCall(
            id: (a["gen_ai.tool.call.id"] ?? a["tool_call.id"])?.string, name: name, arguments: arguments?.text ?? "",
            result: result?.text)
    }

    /// The attributes less those whose content became the span's messages or tool call: they are
    /// most of a span's bytes, the raw source keeps them as written, and storing them twice more
    /// (in attributes and as messages) was most of what an import wrote.
    private static func withoutContent(_ a: JSONObject, span: TraceSpan) -> JSONObject {
        let messages = !span.input.isEmpty || !span.output.isEmpty
        let tool = span.tool != nil
        guard messages || tool else { return a }
        // One pass over the attributes (a span has dozens; dropping them one name at a time
        // searched the object for each).
        return a.filter { member in
            switch member.key {
            case "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions": !messages
            // OpenInference's summary of the same messages (what Loupe's own export adds); for a
            // tool, the arguments and result again when the GenAI attributes carried them.
            case "input.value", "output.value", "input.mime_type", "output.mime_type":
                !(tool || messages && span.kind == .llm)
            case "gen_ai.tool.call.arguments", "gen_ai.tool.call.result": !tool
            case let key:
                !(messages && Self.flattenedMessagePrefixes.contains(where: key.hasPrefix))
            }
        }
    }

    private static let flattenedMessagePrefixes = [
        "llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.",
    ]

    private static func evaluationScores(_ events: [SpanParts.Event]) -> [Score] {
        events.compactMap { event in
            guard event.name == "gen_ai.evaluation.result" else { return nil }
            let a = event.attributes
            return Score(
                scorer: a["gen_ai.evaluation.name"]?.string ?? "evaluation",
                value: a["gen_ai.evaluation.score.value"] ?? a["gen_ai.evaluation.score.label"] ?? .null,
                answer: a["gen_ai.evaluation.score.label"]?.string,
                explanation: a["gen_ai.evaluation.explanation"]?.string)
        }
    }

    /// `TreeOrder` over whole spans; spans no root reaches (a cycle of parents) are kept, as roots.
    static func treeOrder(_ spans: [TraceSpan]) -> [TraceSpan] {
        let (order, unreached) = TreeOrder.indices(
            ids: spans.map(\.spanID), parents: spans.map(\.parentID), starts: spans.map(\.startNs))
        return order.map { spans[$0] }
            + unreached.map { i in
                var orphan = spans[i]
                orphan.parentID = nil
                return orphan
            }
    }
}

extension JSONValue {
    /// What the value is, for an error that names a value of the wrong type ("a list").
    fileprivate var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }
}
