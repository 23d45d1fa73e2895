import LoupeAgents
import LoupeBase

/// A span's content and its source as written, for the Traces panel's step pane.
package struct SpanDetail: Hashable, Sendable {
    package var payload: SpanPayload
    /// The span as its file had it (OTLP JSON, an Inspect event …), for `r`.
    package var raw: JSONValue?

    package init(payload: SpanPayload, raw: JSONValue?) {
        self.payload = payload
        self.raw = raw
    }
}
