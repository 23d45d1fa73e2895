import Foundation
import LoupeAgents
import LoupeBase
import SwiftProtobuf

/// An OTLP trace request in either encoding, read into the trace model. Both go through the one
/// mapping the file importer uses (`OTLPImporter.span`): the JSON one from its parsed value, the
/// protobuf one straight from the generated swift-protobuf messages (no JSON in between: that
/// made and dropped a tree per span, a third of the receiver's time), each span keeping its own
/// `Span` message bytes as its source. Shown, that source reads as OTLP/JSON (ids in hex, 64-bit
/// integers as decimal strings), like an imported span's.
package enum OTLPDecoding {
    /// A request's spans read, and those rejected with where and why (partial success).
    package struct Decoded: Sendable {
        package var spans: [OTLPImporter.OTLPSpan]
        package var rejected: [TraceImportError]
    }

    /// Why a body is no request at all: answered 400, nothing stored.
    package struct Malformed: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Nesting deeper than this (an attribute holding an array holding a list…) is refused; the
    /// conventions nest a few levels at most.
    static let recursionLimit = 64

    /// Reads a protobuf `ExportTraceServiceRequest`. A request that protobuf refuses only because
    /// of some of its spans (a string in one that is not UTF-8, an attribute nested too deep) has
    /// those spans rejected, named by their path, and the others read: OTLP's partial success.
    package static func protobuf(_ body: Data) throws(Malformed) -> Decoded {
        let result = body.withUnsafeBytes { bytes in
            Result { () throws(Malformed) -> Decoded in try protobuf(bytes: bytes) }
        }
        return try result.get()
    }

    /// ``protobuf(_:)`` of bytes in memory that stay valid for the call (a gRPC message's).
    package static func protobuf(bytes: UnsafeRawBufferPointer) throws(Malformed) -> Decoded {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return Decoded(spans: [], rejected: []) }
        // Not copied: decoding copies what it keeps out of the bytes.
        let body = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
        let request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
        do {
            var options = BinaryDecodingOptions()
            options.messageDepthLimit = recursionLimit
            request = try .init(serializedBytes: body, options: options)
        } catch {
            if let salvaged = spanBySpan(bytes) { return salvaged }
            throw Malformed(description: "the body is not a protobuf ExportTraceServiceRequest (\(error))")
        }
        return message(request)
    }

    /// Reads a JSON `ExportTraceServiceRequest` (OTLP/JSON: hex ids, camelCase or snake_case).
    package static func json(_ body: Data) throws(Malformed) -> Decoded {
        let value: JSONValue
        do { value = try JSONValue.parse(body) } catch {
            throw Malformed(description: "the body is not JSON: \(error)")
        }
        guard let members = value.object else { throw Malformed(description: "the body is JSON but not an object") }
        // `{}` is proto3 JSON's empty request.
        if members.isEmpty { return Decoded(spans: [], rejected: []) }
        return try decoded(value, encoding: "JSON")
    }

    private static func decoded(_ request: JSONValue, encoding: String) throws(Malformed) -> Decoded {
        do {
            let (spans, rejected) = try OTLPImporter.spans(in: request, file: "request", line: nil)
            // The mapping reads the spans in order and rejects some, naming each by its path: the
            // paths left, in the same order, are those of the spans read.
            let rejectedPaths = Set(rejected.compactMap { $0.field.flatMap(spanPath) })
            let paths = spanPaths(request).filter { !rejectedPaths.contains($0) }
            precondition(paths.count == spans.count, "the request's spans and their paths disagree")
            return checked(Array(zip(paths, spans.map(normalized))), rejected: rejected)
        } catch {
            // The structure is wrong (no list, a list where an object belongs): named by its field.
            throw Malformed(
                description: "the \(encoding) body is not an ExportTraceServiceRequest: "
                    + (error.field.map { "\($0) " } ?? "") + error.message)
        }
    }

    /// The path of each span of an OTLP/JSON request, in the order `OTLPImporter.spans(in:)`
    /// reads them.
    private static func spanPaths(_ request: JSONValue) -> [String] {
        var paths: [String] = []
        let resources = request["resourceSpans"]?.array ?? request["resource_spans"]?.array ?? []
        for (r, resource) in resources.enumerated() {
            let scopes = resource["scopeSpans"]?.array ?? resource["scope_spans"]?.array ?? []
            for (s, scope) in scopes.enumerated() {
                for i in (scope["spans"]?.array ?? []).indices {
                    paths.append("resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]")
                }
            }
        }
        return paths
    }

    /// The span's path at the start of a rejected field's (`resourceSpans[0].scopeSpans[1].spans[2]`
    /// of `resourceSpans[0].scopeSpans[1].spans[2].spanId`).
    private static func spanPath(_ field: String) -> String? {
        guard let bracket = field.range(of: ".spans[") else { return nil }
        guard let close = field[bracket.upperBound...].firstIndex(of: "]") else { return nil }
        return String(field[..<field.index(after: close)])
    }

    /// The request in OTLP/JSON's shape.
    static func json(_ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest) -> JSONValue {
        .object([
            "resourceSpans": .array(
                request.resourceSpans.map { resource in
                    .object([
                        "resource": .object(["attributes": attributes(resource.resource.attributes)]),
                        "scopeSpans": .array(
                            resource.scopeSpans.map { scope in
                                .object([
                                    "scope": .object([
                                        "name": .string(scope.scope.name), "version": .string(scope.scope.version),
                                    ]),
                                    "spans": .array(scope.spans.map(span)),
                                ])
                            }),
                    ])
                })
        ])
    }

    static func span(_ span: Opentelemetry_Proto_Trace_V1_Span) -> JSONValue {
        var out: [String: JSONValue] = [
            "traceId": .string(hex(span.traceID)), "spanId": .string(hex(span.spanID)), "name": .string(span.name),
            "kind": .number(Double(span.kind.rawValue)),
            "startTimeUnixNano": .string(String(span.startTimeUnixNano)),
            "attributes": attributes(span.attributes),
        ]
        if !span.parentSpanID.isEmpty { out["parentSpanId"] = .string(hex(span.parentSpanID)) }
        // An unended span has no end (0 is "not set" in proto3).
        if span.endTimeUnixNano != 0 { out["endTimeUnixNano"] = .string(String(span.endTimeUnixNano)) }
        if !span.events.isEmpty {
            out["events"] = .array(
                span.events.map { event in
                    .object([
                        "timeUnixNano": .string(String(event.timeUnixNano)), "name": .string(event.name),
                        "attributes": attributes(event.attributes),
                    ])
                })
        }
        if !span.links.isEmpty {
            out["links"] = .array(
                span.links.map { link in
                    .object([
                        "traceId": .string(hex(link.traceID)), "spanId": .string(hex(link.spanID)),
                        "attributes": attributes(link.attributes),
                    ])
                })
        }
        if span.hasStatus {
            var status: [String: JSONValue] = ["code": .number(Double(span.status.code.rawValue))]
            if !span.status.message.isEmpty { status["message"] = .string(span.status.message) }
            out["status"] = .object(status)
        }
        return .object(out)
    }

    static func attributes(_ list: [Opentelemetry_Proto_Common_V1_KeyValue]) -> JSONValue {
        .array(list.map { .object(["key": .string($0.key), "value": anyValue($0.value)]) })
    }

    static func anyValue(_ value: Opentelemetry_Proto_Common_V1_AnyValue) -> JSONValue {
        switch value.value {
        case .stringValue(let s): .object(["stringValue": .string(s)])
        case .boolValue(let b): .object(["boolValue": .bool(b)])
        case .intValue(let i): .object(["intValue": .string(String(i))])
        case .doubleValue(let d): .object(["doubleValue": d.isFinite ? .number(d) : .string(nonFinite(d))])
        case .bytesValue(let data): .object(["bytesValue": .string(data.base64EncodedString())])
        case .arrayValue(let array): .object(["arrayValue": .object(["values": .array(array.values.map(anyValue))])])
        case .kvlistValue(let list): .object(["kvlistValue": .object(["values": attributes(list.values)])])
        // A dictionary index (profiles' string table) means nothing without the dictionary.
        case .stringValueStrindex, nil: .object([:])
        }
    }

    /// A non-finite double as proto3 JSON writes it: "NaN", "Infinity", "-Infinity".
    static func nonFinite(_ d: Double) -> String {
        d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity"
    }

    /// Lower-case hex of an id's bytes, whatever their number (the mapping checks the length).
    static func hex(_ bytes: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension OTLPDecoding {
    /// Reads a decoded request (gRPC decodes it itself): a request always has its list (perhaps
    /// empty), so only spans can be rejected.
    package static func message(
        _ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
    ) -> Decoded {
        // Every span with where it is; then read on every core, a big request being many spans.
        var located: [LocatedSpan] = []
        for (r, resource) in request.resourceSpans.enumerated() {
            let service = serviceName(resource.resource)
            for (s, scope) in resource.scopeSpans.enumerated() {
                located += scope.spans.enumerated().map { ($1, service, (r, s, $0)) }
            }
        }
        return read(located, rejected: [])
    }

    /// A span of a request, the `service.name` of its resource, and its indices in the request
    /// (resource, scope, span).
    typealias LocatedSpan = (span: Opentelemetry_Proto_Trace_V1_Span, service: String?, at: (Int, Int, Int))

    /// A resource's `service.name` (the last, if repeated).
    static func serviceName(_ resource: Opentelemetry_Proto_Resource_V1_Resource) -> String? {
        resource.attributes.last { $0.key == "service.name" }.flatMap { plain($0.value).string }
    }

    /// `located` read through the mapping on every core, then checked against OTLP's rules; each
    /// span that cannot be kept is added to `rejected`, named by its path.
    static func read(_ located: [LocatedSpan], rejected alreadyRejected: [TraceImportError]) -> Decoded {
        let readOne = {
            @Sendable (item: LocatedSpan) in
            Result { () throws(TraceImportError) -> OTLPImporter.OTLPSpan in
                let (r, s, i) = item.at
                var found = try Self.read(item.span, path: "resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]")
                found.service = item.service
                return found
            }
        }
        let results = parallelMap(located, serialBelow: 64, readOne)
        var accepted: [(path: String, span: OTLPImporter.OTLPSpan)] = []
        var rejected = alreadyRejected
        accepted.reserveCapacity(results.count)
        for (item, result) in zip(located, results) {
            switch result {
            case .success(let span):
                let (r, s, i) = item.at
                accepted.append(("resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]", span))
            case .failure(let error): rejected.append(error)
            }
        }
        return checked(accepted, rejected: rejected)
    }

    /// One protobuf span through the mapping, its message bytes kept as its source.
    static func read(
        _ span: Opentelemetry_Proto_Trace_V1_Span, file: String = "request", path: @autoclosure () -> String
    ) throws(TraceImportError) -> OTLPImporter.OTLPSpan {
        guard let start = Int64(exactly: span.startTimeUnixNano) else {
            throw TraceImportError(
                file: file, field: "\(path()).startTimeUnixNano",
                "\(span.startTimeUnixNano) is past the latest time Loupe stores (Int64 nanoseconds)")
        }
        let parts = OTLPImporter.SpanParts(
            traceID: hex(span.traceID), spanID: hex(span.spanID),
            parentID: span.parentSpanID.isEmpty ? nil : hex(span.parentSpanID), name: span.name, startNs: start,
            // An unended span has no end (0 is "not set" in proto3).
            endNs: span.endTimeUnixNano == 0 ? nil : Int64(exactly: span.endTimeUnixNano),
            attributes: plain(span.attributes),
            events: span.events.map { (name: $0.name, attributes: plain($0.attributes)) },
            statusCode: span.hasStatus ? span.status.code.rawValue : 0,
            statusMessage: span.status.message.isEmpty ? nil : span.status.message)
        var found = normalized(try OTLPImporter.span(parts, file: file, line: nil, path: path()))
        // Re-serialising a message just decoded cannot fail (proto3 has no required fields);
        // were it to, the span is stored without its source rather than refused.
        found.span.rawProtobuf = try? span.serializedBytes()
        return found
    }

    /// A stored span source: a `Span` message's bytes (received as protobuf) or OTLP/JSON text.
    /// Other importers' sources are JSON of any kind (an array, a string): only a first byte of
    /// 0x0A, which no JSON text starts with, is a message.
    package static func storedSpan(_ bytes: Data, file: String) throws(TraceImportError) -> OTLPImporter.OTLPSpan {
        // A kept message starts with field 1's tag (its trace id, always written, first).
        if bytes.first == 0x0A {
            let span: Opentelemetry_Proto_Trace_V1_Span
            do { span = try .init(serializedBytes: bytes) } catch {
                throw TraceImportError(file: file, "a stored span's source is unreadable: \(error)")
            }
            return try read(span, file: file, path: "span")
        }
        let raw: JSONValue
        do { raw = try JSONValue.parse(bytes) } catch {
            throw TraceImportError(file: file, "a stored span's source is unreadable: \(error)")
        }
        return normalized(try OTLPImporter.span(stored: raw, file: file))
    }

    /// A stored span source as OTLP/JSON, for showing it: JSON text as it is, a `Span` message's
    /// bytes in OTLP/JSON's shape.
    ///
    /// - Throws: ``Malformed`` saying why the bytes are neither, with protobuf's reason when they
    ///   start as a `Span` message does (field 1, the trace id) and JSON's position otherwise.
    package static func storedSourceJSON(_ bytes: Data) throws(Malformed) -> JSONValue {
        var asMessage: String?
        // A message starts with its trace id's tag (0x0A); JSON text may start with a newline, too.
        if bytes.first == 0x0A {
            do {
                return span(try Opentelemetry_Proto_Trace_V1_Span(serializedBytes: bytes))
            } catch {
                asMessage = "\(error)"
            }
        }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw Malformed(
                description: asMessage.map { "not an OTLP span message (\($0)) nor JSON (\(error))" }
                    ?? "not JSON: \(error)")
        }
    }

    /// OTLP `KeyValue`s as plain JSON values, as `OTLPImporter.attributes` reads their JSON form
    /// (the last of a repeated key wins).
    static func plain(_ list: [Opentelemetry_Proto_Common_V1_KeyValue]) -> JSONObject {
        JSONObject(list.map { ($0.key, plain($0.value)) })
    }

    /// An `AnyValue` as plain JSON: int64s as numbers, bytes as base64, a non-finite double as its
    /// proto3 JSON name ("NaN"), nothing as null; the same as `OTLPImporter.anyValue` of its JSON
    /// form.
    static func plain(_ value: Opentelemetry_Proto_Common_V1_AnyValue) -> JSONValue {
        switch value.value {
        case .stringValue(let s): .string(s)
        case .boolValue(let b): .bool(b)
        case .intValue(let i): .number(Double(i))
        case .doubleValue(let d): d.isFinite ? .number(d) : .string(nonFinite(d))
        case .bytesValue(let data): .string(data.base64EncodedString())
        case .arrayValue(let array): .array(array.values.map(plain))
        case .kvlistValue(let list): .object(plain(list.values))
        case .stringValueStrindex, nil: .null
        }
    }

    /// OTLP's partial success for what was rejected: the count, and a message naming the first
    /// few spans with where and why.
    package static func partialSuccess(
        _ rejected: [TraceImportError]
    ) -> Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse {
        var response = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse()
        guard !rejected.isEmpty else { return response }
        response.partialSuccess.rejectedSpans = Int64(rejected.count)
        let named = rejected.prefix(5).map { error in
            (error.part.map { "\($0): " } ?? "") + (error.field.map { "\($0): " } ?? "") + error.message
        }
        let more = rejected.count > 5 ? "; and \(rejected.count - 5) more" : ""
        response.partialSuccess.errorMessage =
            "\(rejected.count) span\(rejected.count == 1 ? "" : "s") rejected: " + named.joined(separator: "; ") + more
        return response
    }
}

extension Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest {
    /// The request's protobuf bytes, as an exporter sends them.
    /// (Serialising a proto3 message cannot fail: it has no required fields.)
    package var protobuf: Data { (try? serializedData()) ?? Data() }
}

extension Opentelemetry_Proto_Common_V1_KeyValue {
    /// A string attribute, as an SDK writes one.
    package static func string(_ key: String, _ value: String) -> Self {
        var pair = Self()
        pair.key = key
        pair.value.stringValue = value
        return pair
    }

    /// An integer attribute.
    package static func int(_ key: String, _ value: Int64) -> Self {
        var pair = Self()
        pair.key = key
        pair.value.intValue = value
        return pair
    }
}
