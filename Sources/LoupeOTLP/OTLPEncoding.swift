import Foundation
import LoupeBase

/// An OTLP/JSON export request (the shape `TraceExport.otlp` writes and `OTLPDecoding` reads:
/// hex ids, 64-bit integers as decimal strings, enums as numbers) turned into the protobuf
/// message an exporter sends — the inverse of `OTLPDecoding.json(_:)`, so a trace goes out to a
/// collector, Phoenix or Langfuse in the encoding every OTLP/HTTP endpoint takes.
package enum OTLPEncoding {
    /// What in the JSON is not a request, and where.
    package struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        package var path: String
        package var problem: String
        package var description: String { "\(path): \(problem)" }
    }

    package typealias Request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest

    package static func request(_ json: JSONValue) throws(Invalid) -> Request {
        var request = Request()
        for (r, resourceJSON) in try list(json, "resourceSpans", path: "").enumerated() {
            let path = "resourceSpans[\(r)]"
            var resource = Opentelemetry_Proto_Trace_V1_ResourceSpans()
            resource.resource.attributes = try attributes(
                resourceJSON["resource"]?["attributes"], path: path + ".resource")
            for (s, scopeJSON) in try list(resourceJSON, "scopeSpans", path: path).enumerated() {
                let path = "\(path).scopeSpans[\(s)]"
                var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
                scope.scope.name = scopeJSON["scope"]?["name"]?.string ?? ""
                scope.scope.version = scopeJSON["scope"]?["version"]?.string ?? ""
                scope.spans = try list(scopeJSON, "spans", path: path).enumerated().map { (i, span) throws(Invalid) in
                    try self.span(span, path: "\(path).spans[\(i)]")
                }
                resource.scopeSpans.append(scope)
            }
            request.resourceSpans.append(resource)
        }
        return request
    }

    /// The request split into requests of at most `spansEach` spans, as a batch exporter sends a
    /// large trace: each keeps its resource and scope.
    package static func requests(_ json: JSONValue, spansEach: Int) throws(Invalid) -> [Request] {
        guard spansEach > 0 else { throw Invalid(path: "", problem: "a request holds at least one span") }
        let whole = try request(json)
        var out: [Request] = []
        var current = Request()
        var count = 0
        for resource in whole.resourceSpans {
            for scope in resource.scopeSpans {
                var start = 0
                while start < scope.spans.count {
                    if count == spansEach {
                        out.append(current)
                        current = Request()
                        count = 0
                    }
                    let end = min(scope.spans.count, start + spansEach - count)
                    var part = scope
                    part.spans = Array(scope.spans[start..<end])
                    var holder = resource
                    holder.scopeSpans = [part]
                    current.resourceSpans.append(holder)
                    count += end - start
                    start = end
                }
            }
        }
        if count > 0 { out.append(current) }
        return out
    }

    static func span(_ json: JSONValue, path: String) throws(Invalid) -> Opentelemetry_Proto_Trace_V1_Span {
        var span = Opentelemetry_Proto_Trace_V1_Span()
        span.traceID = try id(json, "traceId", bytes: 16, path: path)
        span.spanID = try id(json, "spanId", bytes: 8, path: path)
        if json["parentSpanId"] != nil { span.parentSpanID = try id(json, "parentSpanId", bytes: 8, path: path) }
        span.name = json["name"]?.string ?? ""
        if let kind = json["kind"]?.number {
            span.kind = Opentelemetry_Proto_Trace_V1_Span.SpanKind(rawValue: Int(kind)) ?? .unspecified
        }
        span.startTimeUnixNano = try nanoseconds(json["startTimeUnixNano"], path: path + ".startTimeUnixNano")
        span.endTimeUnixNano = try nanoseconds(json["endTimeUnixNano"], path: path + ".endTimeUnixNano")
        span.attributes = try attributes(json["attributes"], path: path)
        if let events = json["events"]?.array {
            span.events = try events.enumerated().map { (e, eventJSON) throws(Invalid) in
                let path = "\(path).events[\(e)]"
                var event = Opentelemetry_Proto_Trace_V1_Span.Event()
                event.name = eventJSON["name"]?.string ?? ""
                event.timeUnixNano = try nanoseconds(eventJSON["timeUnixNano"], path: path + ".timeUnixNano")
                event.attributes = try attributes(eventJSON["attributes"], path: path)
                return event
            }
        }
        if let links = json["links"]?.array {
            span.links = try links.enumerated().map { (l, linkJSON) throws(Invalid) in
                let path = "\(path).links[\(l)]"
                var link = Opentelemetry_Proto_Trace_V1_Span.Link()
                link.traceID = try id(linkJSON, "traceId", bytes: 16, path: path)
                link.spanID = try id(linkJSON, "spanId", bytes: 8, path: path)
                link.attributes = try attributes(linkJSON["attributes"], path: path)
                return link
            }
        }
        if let status = json["status"], let code = status["code"]?.number {
            span.status.code = Opentelemetry_Proto_Trace_V1_Status.StatusCode(rawValue: Int(code)) ?? .unset
            span.status.message = status["message"]?.string ?? ""
        }
        return span
    }

    static func attributes(
        _ json: JSONValue?, path: String
    ) throws(Invalid) -> [Opentelemetry_Proto_Common_V1_KeyValue] {
        guard let json else { return [] }
        guard let pairs = json.array else { throw Invalid(path: path + ".attributes", problem: "not a list") }
        return try pairs.enumerated().map { (a, pairJSON) throws(Invalid) in
            let path = "\(path).attributes[\(a)]"
            guard let key = pairJSON["key"]?.string else { throw Invalid(path: path, problem: "no key") }
            var pair = Opentelemetry_Proto_Common_V1_KeyValue()
            pair.key = key
            pair.value = try anyValue(pairJSON["value"] ?? .object([:]), path: path + ".value", depth: 0)
            return pair
        }
    }

    static func anyValue(
        _ json: JSONValue, path: String, depth: Int
    ) throws(Invalid) -> Opentelemetry_Proto_Common_V1_AnyValue {
        guard depth < OTLPDecoding.recursionLimit else { throw Invalid(path: path, problem: "nested too deeply") }
        var value = Opentelemetry_Proto_Common_V1_AnyValue()
        if let s = json["stringValue"]?.string {
            value.stringValue = s
        } else if let b = json["boolValue"]?.bool {
            value.boolValue = b
        } else if let i = json["intValue"] {
            guard let n = i.string.flatMap({ Int64($0) }) ?? i.number.flatMap({ Int64(exactly: $0) }) else {
                throw Invalid(path: path + ".intValue", problem: "\(i.compactJSON) is not a 64-bit integer")
            }
            value.intValue = n
        } else if let d = json["doubleValue"] {
            guard let n = d.number ?? d.string.flatMap({ Double($0) }) else {
                throw Invalid(path: path + ".doubleValue", problem: "\(d.compactJSON) is not a number")
            }
            value.doubleValue = n
        } else if let b = json["bytesValue"]?.string {
            guard let data = Data(base64Encoded: b) else {
                throw Invalid(path: path + ".bytesValue", problem: "not base64")
            }
            value.bytesValue = data
        } else if let values = json["arrayValue"]?["values"]?.array {
            var array = Opentelemetry_Proto_Common_V1_ArrayValue()
            for (i, element) in values.enumerated() {
                array.values.append(try anyValue(element, path: "\(path).arrayValue[\(i)]", depth: depth + 1))
            }
            value.arrayValue = array
        } else if let pairs = json["kvlistValue"]?["values"]?.array {
            var list = Opentelemetry_Proto_Common_V1_KeyValueList()
            for (i, pairJSON) in pairs.enumerated() {
                guard let key = pairJSON["key"]?.string else {
                    throw Invalid(path: "\(path).kvlistValue[\(i)]", problem: "no key")
                }
                var pair = Opentelemetry_Proto_Common_V1_KeyValue()
                pair.key = key
                pair.value = try anyValue(
                    pairJSON["value"] ?? .object([:]), path: "\(path).kvlistValue[\(i)].value", depth: depth + 1)
                list.values.append(pair)
            }
            value.kvlistValue = list
        }
        return value
    }

    private static func list(_ json: JSONValue, _ key: String, path: String) throws(Invalid) -> [JSONValue] {
        guard let value = json[key] else { return [] }
        guard let list = value.array else {
            throw Invalid(path: path.isEmpty ? key : "\(path).\(key)", problem: "not a list")
        }
        return list
    }

    private static func id(_ json: JSONValue, _ key: String, bytes: Int, path: String) throws(Invalid) -> Data {
        guard let text = json[key]?.string, text.utf8.count == bytes * 2 else {
            throw Invalid(path: "\(path).\(key)", problem: "not \(bytes * 2) hex digits")
        }
        var out = Data(capacity: bytes)
        var high: UInt8?
        for c in text.utf8 {
            let nibble: UInt8
            switch c {
            case 48...57: nibble = c - 48
            case 97...102: nibble = c - 87
            case 65...70: nibble = c - 55
            default: throw Invalid(path: "\(path).\(key)", problem: "\"\(text)\" is not hex")
            }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return out
    }

    private static func nanoseconds(_ json: JSONValue?, path: String) throws(Invalid) -> UInt64 {
        guard let json else { return 0 }
        if let n = json.string.flatMap({ UInt64($0) }) ?? json.number.flatMap({ UInt64(exactly: $0) }) { return n }
        throw Invalid(path: path, problem: "\(json.compactJSON) is not a time in nanoseconds")
    }
}
