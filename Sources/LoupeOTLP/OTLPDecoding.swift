import Foundation
import LoupeAgents
import LoupeBase
import SwiftProtobuf

/// An OTLP trace request in either encoding, read into the trace model. The protobuf one is
/// decoded by the generated swift-protobuf messages and turned into OTLP/JSON's shape (ids in hex,
/// 64-bit integers as decimal strings), so both encodings go through the one mapping the file
/// importer uses (`OTLPImporter`) and a received span keeps the same source as an imported one.
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

    /// Reads a protobuf `ExportTraceServiceRequest`.
    package static func protobuf(_ body: Data) throws(Malformed) -> Decoded {
        let request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
        do {
            var options = BinaryDecodingOptions()
            options.messageDepthLimit = recursionLimit
            request = try .init(serializedBytes: body, options: options)
        } catch {
            throw Malformed(description: "the body is not a protobuf ExportTraceServiceRequest (\(error))")
        }
        return try decoded(json(request), encoding: "protobuf")
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
            return Decoded(spans: spans, rejected: rejected)
        } catch {
            throw Malformed(
                description: "the \(encoding) body has no resourceSpans list: not an ExportTraceServiceRequest")
        }
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
        case .doubleValue(let d): .object(["doubleValue": d.isFinite ? .number(d) : .string(String(d))])
        case .bytesValue(let data): .object(["bytesValue": .string(data.base64EncodedString())])
        case .arrayValue(let array): .object(["arrayValue": .object(["values": .array(array.values.map(anyValue))])])
        case .kvlistValue(let list): .object(["kvlistValue": .object(["values": attributes(list.values)])])
        // A dictionary index (profiles' string table) means nothing without the dictionary.
        case .stringValueStrindex, nil: .object([:])
        }
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
    /// Reads a request gRPC already decoded.
    package static func message(
        _ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
    ) -> Decoded {
        // A request always has its list (perhaps empty), so only spans can be rejected.
        let read = try? OTLPImporter.spans(in: json(request), file: "request", line: nil)
        return Decoded(spans: read?.read ?? [], rejected: read?.rejected ?? [])
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
