import LoupeBase

/// What a tool answers: a structured result (JSON, what an agent should parse) and a short
/// text rendering of it, with recorded content fenced as data.
package struct ToolResult: Hashable, Sendable {
    package var structured: JSONValue
    package var text: String

    package init(structured: JSONValue, text: String) {
        self.structured = structured
        self.text = text
    }
}
