import Foundation
import LoupeAgents
import LoupeBase
import LoupeOTLP
import SwiftProtobuf
import Testing

@testable import LoupeOTLP
@testable import LoupeReceiver

/// Requests built with the generated OTLP messages, as an SDK's exporter builds them.
enum Requests {
    static func id(_ hex: String) -> Data {
        var bytes = [UInt8]()
        var digits = hex.makeIterator()
        while let high = digits.next(), let low = digits.next() { bytes.append(UInt8("\(high)\(low)", radix: 16)!) }
        return Data(bytes)
    }

    static func string(_ key: String, _ value: String) -> Opentelemetry_Proto_Common_V1_KeyValue {
        .string(key, value)
    }

    static func int(_ key: String, _ value: Int64) -> Opentelemetry_Proto_Common_V1_KeyValue { .int(key, value) }

    static func span(
        trace: String, id: String, parent: String? = nil, name: String, start: UInt64, end: UInt64,
        attributes: [Opentelemetry_Proto_Common_V1_KeyValue] = []
    ) -> Opentelemetry_Proto_Trace_V1_Span {
        var span = Opentelemetry_Proto_Trace_V1_Span()
        span.traceID = Self.id(trace)
        span.spanID = Self.id(id)
        if let parent { span.parentSpanID = Self.id(parent) }
        span.name = name
        span.startTimeUnixNano = start
        span.endTimeUnixNano = end
        span.attributes = attributes
        return span
    }

    static func request(
        _ spans: [Opentelemetry_Proto_Trace_V1_Span], service: String = "agent"
    ) -> Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest {
        var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
        scope.scope.name = "tests"
        scope.spans = spans
        var resource = Opentelemetry_Proto_Trace_V1_ResourceSpans()
        resource.resource.attributes = [string("service.name", service)]
        resource.scopeSpans = [scope]
        var request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest()
        request.resourceSpans = [resource]
        return request
    }

    static let trace = "5b8efff798038103d269b633813fc60c"

    /// An agent span, a chat call under it with GenAI attributes, and a tool call.
    static func agentRun(trace: String = trace) -> [Opentelemetry_Proto_Trace_V1_Span] {
        let t0: UInt64 = 1_763_900_000_000_000_000
        return [
            span(
                trace: trace, id: "eee19b7ec3c1b174", parent: "eee19b7ec3c1b173", name: "chat gpt-4o-mini",
                start: t0 + 1_000, end: t0 + 2_000_000,
                attributes: [
                    string("gen_ai.operation.name", "chat"), string("gen_ai.request.model", "gpt-4o-mini"),
                    int("gen_ai.usage.input_tokens", 42), int("gen_ai.usage.output_tokens", 7),
                    string(
                        "gen_ai.input.messages",
                        #"[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]"#),
                ]),
            span(
                trace: trace, id: "eee19b7ec3c1b175", parent: "eee19b7ec3c1b173", name: "execute_tool get_weather",
                start: t0 + 3_000_000, end: t0 + 4_000_000,
                attributes: [
                    string("gen_ai.operation.name", "execute_tool"), string("gen_ai.tool.name", "get_weather"),
                    string("gen_ai.tool.call.result", "sunny"),
                ]),
            span(
                trace: trace, id: "eee19b7ec3c1b173", name: "invoke_agent weather", start: t0, end: t0 + 5_000_000,
                attributes: [string("gen_ai.operation.name", "invoke_agent")]),
        ]
    }
}

@Suite struct OTLPDecodingTests {
    @Test func protobufRequestReadsLikeTheSameRequestInJSON() throws {
        let request = Requests.request(Requests.agentRun())
        let fromProtobuf = try OTLPDecoding.protobuf(try request.serializedData())
        let fromJSON = try OTLPDecoding.json(Data(try request.jsonUTF8Bytes() as [UInt8]))
        #expect(fromProtobuf.rejected.isEmpty)
        #expect(fromProtobuf.spans.count == 3)
        #expect(fromProtobuf.spans.allSatisfy { $0.traceID == Requests.trace && $0.service == "agent" })
        let chat = try #require(fromProtobuf.spans.first { $0.span.name == "chat gpt-4o-mini" })
        #expect(chat.span.kind == .llm)
        #expect(chat.span.model == "gpt-4o-mini")
        #expect(chat.span.usage.inputTokens == 42)
        #expect(chat.span.input.first?.text == "Weather in Paris?")
        #expect(chat.span.parentID == "eee19b7ec3c1b173")
        #expect(chat.span.startNs == 1_763_900_000_000_001_000)
        // swift-protobuf's JSON writes ids in base64 (proto3's mapping), which OTLP/JSON forbids:
        // those spans are rejected with the reason, not stored under garbled ids.
        #expect(fromJSON.spans.isEmpty)
        #expect(fromJSON.rejected.first?.message.contains("not 32 hex digits") == true)
    }

    /// The protobuf reading fills the mapping's parts straight from the message; it must read
    /// every kind of value, event and status as the JSON reading of the same request does (its
    /// OTLP/JSON shape through `OTLPImporter.spans(in:)`), and a span's kept message must show
    /// and read again as that same span.
    @Test func protobufReadingEqualsTheJSONReadingOfTheSameRequest() throws {
        var spans = Requests.agentRun()
        var values = Opentelemetry_Proto_Common_V1_AnyValue()
        values.arrayValue.values = [Requests.string("x", "a").value, Requests.int("n", 3).value]
        var nested = Opentelemetry_Proto_Common_V1_AnyValue()
        nested.kvlistValue.values = [Requests.string("k", "v"), Requests.int("big", Int64.max)]
        var odd: [Opentelemetry_Proto_Common_V1_KeyValue] = [
            Requests.string("dup", "first"), Requests.string("dup", "last"),
            .init(), Requests.int("gen_ai.usage.input_tokens", 5),
        ]
        odd[2].key = "nan"
        odd[2].value.doubleValue = .nan
        var bytes = Requests.string("blob", "")
        bytes.value.bytesValue = Data([0, 1, 254, 255])
        var list = Requests.string("list", "")
        list.value = values
        var map = Requests.string("map", "")
        map.value = nested
        var flag = Requests.string("flag", "")
        flag.value.boolValue = true
        spans[0].attributes += odd + [bytes, list, map, flag]
        var evaluation = Opentelemetry_Proto_Trace_V1_Span.Event()
        evaluation.name = "gen_ai.evaluation.result"
        evaluation.attributes = [
            Requests.string("gen_ai.evaluation.name", "relevance"),
            Requests.string("gen_ai.evaluation.score.label", "good"),
        ]
        var exception = Opentelemetry_Proto_Trace_V1_Span.Event()
        exception.name = "exception"
        exception.attributes = [Requests.string("exception.message", "tool timed out")]
        spans[1].events = [evaluation, exception]
        spans[1].status.code = .error
        spans[2].status.code = .ok
        spans[2].status.message = "fine"
        spans[2].endTimeUnixNano = 0
        let request = Requests.request(spans)

        let fromProtobuf = OTLPDecoding.message(request)
        let fromJSON = try OTLPImporter.spans(in: OTLPDecoding.json(request), file: "request", line: nil)
        #expect(fromProtobuf.rejected.isEmpty && fromJSON.rejected.isEmpty)
        func content(_ span: OTLPImporter.OTLPSpan) -> OTLPImporter.OTLPSpan {
            var span = span
            span.span.raw = nil
            span.span.rawProtobuf = nil
            return span
        }
        #expect(fromProtobuf.spans.map(content) == fromJSON.read.map(content))
        #expect(fromProtobuf.spans[1].scores.first?.answer == "good")
        #expect(fromProtobuf.spans[1].span.status == .error("tool timed out"))
        #expect(fromProtobuf.spans[0].span.attributes["dup"] == "last")
        #expect(fromProtobuf.spans[0].span.attributes["nan"] == "NaN")
        #expect(fromProtobuf.spans[2].span.endNs == nil)

        // The kept message is the span's source: shown as OTLP/JSON, read again as itself.
        for (received, message) in zip(fromProtobuf.spans, spans) {
            let kept = try #require(received.span.rawProtobuf)
            #expect(try OTLPDecoding.storedSourceJSON(kept) == OTLPDecoding.span(message))
            var again = try OTLPDecoding.storedSpan(kept, file: "trace")
            again.service = received.service
            #expect(again == received)
        }
        // A source stored as JSON text reads as before.
        let text = Data(try #require(fromJSON.read.first?.span.raw).compactJSON.utf8)
        var stored = try OTLPDecoding.storedSpan(text, file: "trace")
        stored.service = fromJSON.read[0].service
        #expect(stored == fromJSON.read[0])
        #expect(throws: TraceImportError.self) { try OTLPDecoding.storedSpan(Data([0x0A, 0xFF]), file: "trace") }
        // Other importers keep JSON of any kind as a source (a chat file's list, a string).
        #expect(
            try OTLPDecoding.storedSourceJSON(Data(#"[{"role":"user"}]"#.utf8)) == .array([.object(["role": "user"])]))
        #expect(try OTLPDecoding.storedSourceJSON(Data(#""ls -la""#.utf8)) == "ls -la")
        // JSON that starts with a newline is JSON, though a message starts with that byte too.
        #expect(try OTLPDecoding.storedSourceJSON(Data("\n{}".utf8)) == .object([:]))
        // Bytes that are neither say why, as each would have read them.
        let neither = #expect(throws: OTLPDecoding.Malformed.self) {
            try OTLPDecoding.storedSourceJSON(Data([0x0A, 0xFF]))
        }
        #expect(neither?.description.hasPrefix("not an OTLP span message (") == true)
        #expect(
            neither?.description.contains(") nor JSON (line 2, column 1: ") == true, "\(neither?.description ?? "")")
        let notJSON = #expect(throws: OTLPDecoding.Malformed.self) {
            try OTLPDecoding.storedSourceJSON(Data("{x".utf8))
        }
        #expect(notJSON?.description.hasPrefix("not JSON: line 1, column ") == true)
    }

    /// What `loupe trace export --to` sends: OTLP/JSON's shape turned back into the message.
    @Test func encodingIsTheInverseOfDecodingAndSplitsLargeRequests() throws {
        var spans = Requests.agentRun()
        spans[0].attributes.append(
            {
                var pair = Opentelemetry_Proto_Common_V1_KeyValue()
                pair.key = "nested"
                pair.value.kvlistValue.values = [.int("n", -3), .string("s", "x")]
                return pair
            }())
        spans[1].status.code = .error
        spans[1].status.message = "tool failed"
        var event = Opentelemetry_Proto_Trace_V1_Span.Event()
        event.name = "gen_ai.choice"
        event.timeUnixNano = 1_763_900_000_000_500_000
        event.attributes = [.string("index", "0")]
        spans[2].events = [event]
        spans[2].kind = .server
        let request = Requests.request(spans)
        #expect(try OTLPEncoding.request(OTLPDecoding.json(request)) == request)

        let parts = try OTLPEncoding.requests(OTLPDecoding.json(request), spansEach: 2)
        #expect(parts.map { $0.resourceSpans.flatMap(\.scopeSpans).flatMap(\.spans).count } == [2, 1])
        #expect(parts.flatMap { $0.resourceSpans.flatMap(\.scopeSpans).flatMap(\.spans) } == spans)
        #expect(parts.allSatisfy { $0.resourceSpans.first?.resource == request.resourceSpans[0].resource })

        var broken = OTLPDecoding.json(request)
        if case .object(var top) = broken, case .array(var resources)? = top["resourceSpans"],
            case .object(var resource) = resources[0], case .array(var scopes)? = resource["scopeSpans"],
            case .object(var scope) = scopes[0], case .array(var list)? = scope["spans"],
            case .object(var span) = list[1]
        {
            span["spanId"] = "xyz"
            list[1] = .object(span)
            scope["spans"] = .array(list)
            scopes[0] = .object(scope)
            resource["scopeSpans"] = .array(scopes)
            resources[0] = .object(resource)
            top["resourceSpans"] = .array(resources)
            broken = .object(top)
        }
        #expect(
            throws: OTLPEncoding.Invalid(
                path: "resourceSpans[0].scopeSpans[0].spans[1].spanId", problem: "not 16 hex digits")
        ) {
            try OTLPEncoding.request(broken)
        }
    }

    @Test func spansWithBadIdsAreRejectedAndTheRestRead() throws {
        var spans = Requests.agentRun()
        spans[1].spanID = Data([1, 2, 3])
        spans[2].traceID = Data(repeating: 7, count: 20)
        let decoded = try OTLPDecoding.protobuf(try Requests.request(spans).serializedData())
        #expect(decoded.spans.map(\.span.name) == ["chat gpt-4o-mini"])
        #expect(decoded.rejected.count == 2)
        let response = OTLPDecoding.partialSuccess(decoded.rejected)
        #expect(response.partialSuccess.rejectedSpans == 2)
        #expect(response.partialSuccess.errorMessage.hasPrefix("2 spans rejected: "))
        #expect(response.partialSuccess.errorMessage.contains("spans[1].spanId: \"010203\" is not 16 hex digits"))
    }

    @Test func bodiesThatAreNoRequestAreMalformed() throws {
        var generator = SplitMix64(seed: 7)
        let random = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.protobuf(random) }
        let whole = try Requests.request(Requests.agentRun()).serializedData()
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.protobuf(whole.prefix(whole.count - 9)) }
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.json(Data("[1, 2]".utf8)) }
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.json(Data(#"{"resourceSpans": 3}"#.utf8)) }
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.json(Data("{\"resourceSpans\": [".utf8)) }
        #expect(try OTLPDecoding.json(Data("{}".utf8)).spans.isEmpty)
    }

    /// 100,000 nested array values: refused by the decoder's depth limit, not by a stack overflow.
    @Test func deepNestingIsRefused() throws {
        var value = Opentelemetry_Proto_Common_V1_AnyValue()
        value.stringValue = "leaf"
        // Built as bytes: 100,000 levels of `AnyValue{array_value: ArrayValue{values: [...]}}`
        // would overflow the stack of swift-protobuf's own recursive serializer.
        var bytes = try value.serializedBytes() as [UInt8]
        for _ in 0..<100_000 {
            bytes = [0x0A] + varint(bytes.count) + bytes  // ArrayValue.values (1)
            bytes = [0x2A] + varint(bytes.count) + bytes  // AnyValue.array_value (5)
            if bytes.count > 8 << 20 { break }
        }
        var span = Requests.agentRun()[2]
        span.attributes = []
        var request = try Requests.request([span]).serializedBytes() as [UInt8]
        // KeyValue{key: "deep", value: <bytes>} appended to the span as attributes (9).
        var pair: [UInt8] = [0x0A, 4] + Array("deep".utf8) + [0x12] + varint(bytes.count) + bytes
        pair = [0x4A] + varint(pair.count) + pair
        let spanBytes = try span.serializedBytes() as [UInt8] + pair
        var scope: [UInt8] = [0x12] + varint(spanBytes.count) + spanBytes
        scope = [0x12] + varint(scope.count) + scope
        request = [0x0A] + varint(scope.count) + scope
        // The span is rejected, not decoded (and not the whole request: its neighbours would go).
        let decoded = try OTLPDecoding.protobuf(Data(request))
        #expect(decoded.spans.isEmpty)
        #expect(
            decoded.rejected.map(\.description) == [
                "request: resourceSpans[0].scopeSpans[0].spans[0]: is not a valid Span: "
                    + "nests messages deeper than 64 levels"
            ])
        var nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        nested = #"{"resourceSpans": "# + nested + "}"
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.json(Data(nested.utf8)) }
    }

    private func varint(_ value: Int) -> [UInt8] {
        var v = UInt64(value)
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    @Test func invalidUTF8AndFarFutureTimesAreKeptSafe() throws {
        var spans = Requests.agentRun()
        spans[2].startTimeUnixNano = UInt64.max
        spans[2].endTimeUnixNano = UInt64.max
        var bytes = try Requests.request(spans).serializedBytes() as [UInt8]
        // "invoke_agent weather" becomes "invoke_agent \xFF\xFEather": invalid UTF-8 in a string.
        let name = Array("invoke_agent weather".utf8)
        let at = try #require(bytes.indices.first { Array(bytes[$0..<min(bytes.count, $0 + name.count)]) == name })
        bytes[at + 13] = 0xFF
        bytes[at + 14] = 0xFE
        // proto3 refuses a string that is not UTF-8: that span is rejected, its neighbours read.
        let broken = try OTLPDecoding.protobuf(Data(bytes))
        #expect(broken.spans.map(\.span.name) == ["chat gpt-4o-mini", "execute_tool get_weather"])
        #expect(
            broken.rejected.map(\.description) == [
                "request: resourceSpans[0].scopeSpans[0].spans[2]: is not a valid Span: "
                    + "has a string that is not valid UTF-8"
            ])
        // A start past Int64's range is rejected with the reason; the other spans are read.
        let decoded = try OTLPDecoding.protobuf(try Requests.request(spans).serializedData())
        #expect(decoded.spans.count == 2)
        #expect(decoded.rejected.first?.field?.hasSuffix("startTimeUnixNano") == true)
    }

    /// A resource that is not UTF-8 rejects the spans under it, naming it; the other resource's
    /// spans are read, with their paths as sent.
    @Test func aResourceThatDoesNotDecodeRejectsItsSpansOnly() throws {
        var good = Requests.request(Requests.agentRun(), service: "good").resourceSpans[0]
        good.scopeSpans.append(good.scopeSpans[0])
        good.scopeSpans[1].spans = [
            Requests.span(trace: Requests.trace, id: "00000000000000b1", name: "more", start: 5, end: 6)
        ]
        let bad = Requests.request([Requests.agentRun()[0]], service: "bad\u{E9}").resourceSpans[0]
        var request = Requests.request([])
        request.resourceSpans = [bad, good]
        var bytes = try request.serializedBytes() as [UInt8]
        // "bad\u{E9}" (C3 A9 in UTF-8) becomes "bad\xFF\xA9".
        let at = try #require(bytes.indices.dropLast().first { bytes[$0] == 0xC3 && bytes[$0 + 1] == 0xA9 })
        bytes[at] = 0xFF
        let decoded = try OTLPDecoding.protobuf(Data(bytes))
        #expect(decoded.spans.map(\.span.name) == Requests.agentRun().map(\.name) + ["more"])
        #expect(decoded.spans.allSatisfy { $0.service == "good" })
        #expect(
            decoded.rejected.map(\.description) == [
                "request: resourceSpans[0].scopeSpans[0].spans[0]: not read: resourceSpans[0].resource has a string "
                    + "that is not valid UTF-8"
            ])
        // Its structure broken (a length past the end), the request is malformed whatever its spans.
        #expect(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.protobuf(Data(bytes.dropLast())) }
    }

    /// A list or an object where the other belongs is no request (proto3 JSON's parse error): the
    /// field is named, nothing is read.
    @Test(arguments: [
        (#"{"resourceSpans": [[[]]]}"#, "resourceSpans[0] is a list, not a ResourceSpans object"),
        (#"{"resourceSpans": {}}"#, "resourceSpans is an object, not a list"),
        (
            #"{"resourceSpans": [{"scopeSpans": {"spans": []}}]}"#,
            "resourceSpans[0].scopeSpans is an object, not a list"
        ),
        (
            #"{"resourceSpans": [{"scopeSpans": [3]}]}"#,
            "resourceSpans[0].scopeSpans[0] is a number, not a ScopeSpans object"
        ),
        (
            #"{"resourceSpans": [{"scopeSpans": [{"spans": [[]]}]}]}"#,
            "resourceSpans[0].scopeSpans[0].spans[0] is a list, not a Span object"
        ),
        (
            #"{"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}"#,
            "resourceSpans[0].scopeSpans[0].spans is a string, not a list"
        ),
    ])
    func jsonOfTheWrongShapeIsMalformedNamingTheField(body: String, named: String) throws {
        let error = try #require(throws: OTLPDecoding.Malformed.self) { try OTLPDecoding.json(Data(body.utf8)) }
        #expect(error.description == "the JSON body is not an ExportTraceServiceRequest: \(named)")
    }

    /// Empty or null lists are proto3 JSON's empty ones.
    @Test func nullAndEmptyListsAreEmpty() throws {
        let body = #"{"resource_spans": null}"#
        #expect(try OTLPDecoding.json(Data(body.utf8)).spans.isEmpty)
        let lists = #"{"resourceSpans": [{"scopeSpans": null}, {"scopeSpans": [{"spans": null}, {"spans": []}]}]}"#
        let decoded = try OTLPDecoding.json(Data(lists.utf8))
        #expect(decoded.spans.isEmpty && decoded.rejected.isEmpty)
    }
}

/// What OTLP allows beyond a span's shape: each span Loupe would not keep as sent is rejected in
/// the partial success with its path, and its neighbours are stored.
@Suite struct OTLPSemanticsTests {
    static let t0: UInt64 = 1_763_900_000_000_000_000

    /// The same hostile request in protobuf and in OTLP/JSON: what each rejects, by path.
    @Test(arguments: ["protobuf", "JSON"])
    func spansOTLPForbidsAreRejectedByPathAndTheirNeighboursKept(encoding: String) throws {
        let trace = Requests.trace
        let zeroTrace = String(repeating: "0", count: 32)
        let spans = [
            Requests.span(trace: trace, id: "00000000000000a1", name: "first copy", start: Self.t0, end: Self.t0 + 5),
            Requests.span(trace: zeroTrace, id: "00000000000000a2", name: "zero trace", start: Self.t0, end: Self.t0),
            Requests.span(trace: trace, id: "0000000000000000", name: "zero span", start: Self.t0, end: Self.t0),
            Requests.span(trace: trace, id: "00000000000000a3", name: "backwards", start: Self.t0 + 9, end: Self.t0),
            Requests.span(
                trace: trace, id: "00000000000000a4", parent: "0000000000000000", name: "zero parent\u{0}cut",
                start: Self.t0, end: Self.t0 + 1),
            Requests.span(trace: trace, id: "00000000000000a1", name: "second copy", start: Self.t0, end: Self.t0 + 7),
            // The same span id in another trace is another span.
            Requests.span(
                trace: "5b8efff798038103d269b633813fc60d", id: "00000000000000a1", name: "other trace",
                start: Self.t0, end: Self.t0),
        ]
        let request = Requests.request(spans)
        let decoded =
            encoding == "protobuf"
            ? try OTLPDecoding.protobuf(try request.serializedData())
            : try OTLPDecoding.json(Data(OTLPDecoding.json(request).compactJSON.utf8))
        let at = "resourceSpans[0].scopeSpans[0].spans"
        #expect(decoded.spans.map(\.span.name) == ["zero parent\u{FFFD}cut", "second copy", "other trace"])
        let rooted = try #require(decoded.spans.first)
        #expect(rooted.span.parentID == nil)
        #expect(!rooted.span.name.contains("\u{0}"))
        let fields = decoded.rejected.compactMap(\.field)
        #expect(
            Set(fields) == [
                "\(at)[1].traceId", "\(at)[2].spanId", "\(at)[3].endTimeUnixNano", "\(at)[0].spanId",
            ])
        let duplicate = try #require(decoded.rejected.first { $0.field == "\(at)[0].spanId" })
        #expect(duplicate.message.contains("\(at)[5]"))
        let response = OTLPDecoding.partialSuccess(decoded.rejected)
        #expect(response.partialSuccess.rejectedSpans == 4)
        #expect(response.partialSuccess.errorMessage.contains("\(at)[1].traceId: is all zeros"))
        #expect(response.partialSuccess.errorMessage.contains("\(at)[3].endTimeUnixNano: "))
    }

    /// What only OTLP/JSON can carry: a negative start and a parent id that is not hex.
    @Test func negativeStartsAndParentsThatAreNotHexAreRejected() throws {
        let body = """
            {"resourceSpans": [{"scopeSpans": [{"spans": [
              {"traceId": "\(Requests.trace)", "spanId": "00000000000000b1", "name": "early",
               "startTimeUnixNano": "-5", "endTimeUnixNano": "10"},
              {"traceId": "\(Requests.trace)", "spanId": "00000000000000b2", "name": "bad parent",
               "parentSpanId": "nothex!!", "startTimeUnixNano": "5", "endTimeUnixNano": "10"},
              {"traceId": "\(Requests.trace)", "spanId": "00000000000000b3", "name": "nul\\u0000name",
               "startTimeUnixNano": "5", "endTimeUnixNano": "10"},
              {"traceId": "\(Requests.trace)", "spanId": "00000000000000b4", "name": "fine",
               "parentSpanId": "00000000000000b3", "startTimeUnixNano": "5", "endTimeUnixNano": "10"}
            ]}]}]}
            """
        let decoded = try OTLPDecoding.json(Data(body.utf8))
        #expect(decoded.spans.map(\.span.name) == ["nul\u{FFFD}name", "fine"])
        let at = "resourceSpans[0].scopeSpans[0].spans"
        #expect(decoded.rejected.map(\.field) == ["\(at)[0].startTimeUnixNano", "\(at)[1].parentSpanId"])
        #expect(decoded.rejected[1].message == "\"nothex!!\" is not 16 hex digits")
    }
}

@Suite struct ReceiverConfigurationTests {
    @Test func loopbackIsTheDefaultAndAnythingElseNeedsAToken() throws {
        #expect(ReceiverConfiguration.isLoopback("127.0.0.1"))
        #expect(ReceiverConfiguration.isLoopback("127.3.4.5"))
        #expect(ReceiverConfiguration.isLoopback("::1"))
        #expect(ReceiverConfiguration.isLoopback("[::1]"))
        #expect(ReceiverConfiguration.isLoopback("localhost"))
        #expect(!ReceiverConfiguration.isLoopback("0.0.0.0"))
        #expect(!ReceiverConfiguration.isLoopback("127.0.0.1.example.com"))
        #expect(!ReceiverConfiguration.isLoopback("10.0.0.2"))
        var open = ReceiverConfiguration()
        open.host = "0.0.0.0"
        #expect(throws: ReceiverConfiguration.Invalid.self) { try open.validated() }
        open.token = "s3cret"
        #expect(try open.validated().host == "0.0.0.0")
        #expect(open.authorizes("Bearer s3cret"))
        #expect(open.authorizes("bearer s3cret"))
        #expect(!open.authorizes("Bearer s3cre"))
        #expect(!open.authorizes("Bearer s3cret2"))
        #expect(!open.authorizes("s3cret"))
        #expect(!open.authorizes(nil))
        #expect(ReceiverConfiguration().authorizes(nil))
    }
}

@Suite struct ExporterTransportTests {
    /// Foundation names transport failures by number ("NSURLErrorDomain -1004"): the exporter says
    /// them in words, and tries again only where another try may help.
    @Test func transportFailuresAreSaidInWordsAndOnlyTransientOnesRetried() {
        let refused = OTLPExporter.transport(URLError(.cannotConnectToHost))
        #expect(refused.why.contains("nothing is listening") && !refused.transient)
        #expect(OTLPExporter.transport(URLError(.timedOut)).transient)
        #expect(OTLPExporter.transport(URLError(.networkConnectionLost)).transient)
        #expect(!OTLPExporter.transport(URLError(.cannotFindHost)).transient)
        #expect(OTLPExporter.transport(URLError(.badServerResponse)).why == "the request failed (URLError -1011)")
    }
}
