import Foundation
import LoupeAgents
import LoupeBase
import LoupeOTLP
import LoupeStore

/// A span's content and its source as written, for the Traces panel's step pane: decoded once,
/// when the span is read, so that drawing it parses nothing.
package struct SpanDetail: Hashable, Sendable {
    /// The span's messages, tool call and attributes; empty when its column does not read back
    /// (``unreadable`` says so).
    package var payload: SpanPayload
    /// The span as its file had it (OTLP JSON, an Inspect event …), for `r`.
    package var raw: JSONValue?
    /// The stored columns of the span that do not read back, each naming its trace, span and
    /// column: the step pane shows them where the content would be.
    package var unreadable: [StoredValueError]
    /// The tool call's arguments laid out over lines when they are JSON, as written otherwise.
    package var toolArguments: String?
    /// The tool call's result laid out over lines when it is a JSON array or object.
    package var toolResult: String?
    /// Text attributes that hold a JSON array or object (an input or output as Traceloop and
    /// OpenInference record it), laid out over lines, by key.
    package var laidOutAttributes: [String: String]

    package init(payload: SpanPayload, raw: JSONValue?, unreadable: [StoredValueError] = []) {
        self.payload = payload
        self.raw = raw
        self.unreadable = unreadable
        // Arguments the source did not hold as JSON keep their text and its verdict.
        toolArguments = payload.tool.flatMap { tool in
            tool.argumentsError == nil ? (try? JSONValue.parse(tool.arguments))?.prettyJSON ?? tool.arguments : nil
        }
        toolResult = payload.tool?.result.flatMap(Self.laidOut)
        laidOutAttributes = [:]
        for (key, value) in payload.attributes {
            if let text = value.string, let laid = Self.laidOut(text) { laidOutAttributes[key] = laid }
        }
    }

    /// `text` laid out over lines when it is a JSON array or object, else nil. Tool arguments,
    /// results and attributes are text that may or may not be JSON, so a failure here is an answer.
    private static func laidOut(_ text: String) -> String? {
        guard let first = text.utf8.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return nil }
        return (try? JSONValue.parse(text)).flatMap { $0.isContainer ? $0.prettyJSON : nil }
    }

    /// A span's stored columns decoded: its payload and its source, each a value or a
    /// ``StoredValueError`` naming the trace, span and column that did not read back.
    package init(stored: StoredPayload, trace: Int64, ordinal: Int) {
        let row = "trace \(trace), span \(ordinal)"
        var unreadable: [StoredValueError] = []
        var payload = SpanPayload()
        do {
            payload = try Self.payload(stored.payload, row: row)
        } catch {
            unreadable.append(error)
        }
        var raw: JSONValue?
        do {
            raw = try Self.source(stored, row: row)
        } catch {
            unreadable.append(error)
        }
        self.init(payload: payload, raw: raw, unreadable: unreadable)
    }

    /// A span's `payload_json` decoded; `row` names the span in the error.
    package static func payload(_ stored: String, row: String) throws(StoredValueError) -> SpanPayload {
        let json = try JSONValue.parse(stored: stored, "payload", row: row, column: "payload_json")
        guard json.object != nil else {
            throw StoredValueError("payload", row: row, column: "payload_json", reason: "not a JSON object")
        }
        return SpanPayload(json: json)
    }

    /// The stored source as JSON, from whichever column holds it (a span received as OTLP
    /// protobuf keeps its message, shown in OTLP/JSON's shape); nil when the span has none.
    private static func source(_ stored: StoredPayload, row: String) throws(StoredValueError) -> JSONValue? {
        if let packed = stored.rawZstd {
            guard let source = Zstd.decompress(packed) else {
                throw StoredValueError("source", row: row, column: "raw_zstd", reason: "not a zstd frame")
            }
            do {
                return try OTLPDecoding.storedSourceJSON(source)
            } catch {
                throw StoredValueError("source", row: row, column: "raw_zstd", reason: error.description)
            }
        }
        return try stored.rawJSON.map { text throws(StoredValueError) in
            try JSONValue.parse(stored: text, "source", row: row, column: "raw_json")
        }
    }
}
