import Foundation
import LoupeBase

package struct TraceSpan: Hashable, Sendable {
    package var spanID: String
    package var parentID: String?
    package var kind: SpanKind
    package var name: String
    package var startNs: Int64
    package var endNs: Int64?
    package var status: SpanStatus = .unset
    package var model: String?
    package var usage = Usage()
    /// What an LLM call was sent, and what it answered.
    package var input: [Message] = []
    package var output: [Message] = []
    /// The call a tool span executed, with its result or error.
    package var tool: ToolCall?
    package var attributes: JSONObject = [:]
    /// The span as its source wrote it (for `r` in the trace view and re-export).
    package var raw: JSONValue?
    /// The span's OTLP `Span` message, when it arrived as protobuf (then `raw` is nil): kept as
    /// its bytes, which cost nothing to write, and shown as OTLP/JSON.
    package var rawProtobuf: Data?

    package init(spanID: String, parentID: String?, kind: SpanKind, name: String, startNs: Int64, endNs: Int64?) {
        self.spanID = spanID
        self.parentID = parentID
        self.kind = kind
        self.name = name
        self.startNs = startNs
        self.endNs = endNs
    }

    package var durationNs: Int64? { endNs.map { max(0, $0 - startNs) } }
}
