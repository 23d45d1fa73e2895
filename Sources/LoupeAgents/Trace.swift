import Foundation
import LoupeBase

/// One trace model for every source (DESIGN.md §4): a trace is a tree of spans carrying
/// messages, tool calls and usage. Importers map each format onto it; the Traces panel, the
/// diff and the exporters read only this.
package struct Trace: Hashable, Sendable {
    /// The source's own id (OTLP trace id, Inspect sample id and epoch, file and index).
    package var externalID: String
    package var format: TraceFormat
    package var name: String
    /// Spans in tree order: depth first, siblings by start time, so parents come first.
    package var spans: [TraceSpan]
    package var scores: [Score] = []
    /// Whether span times are real clock times (a message list has only an order).
    package var timed = true
    package var metadata: [String: JSONValue] = [:]

    package init(externalID: String, format: TraceFormat, name: String, spans: [TraceSpan]) {
        self.externalID = externalID
        self.format = format
        self.name = name
        self.spans = spans
    }

    package var startNs: Int64 { spans.map(\.startNs).min() ?? 0 }
    package var endNs: Int64 { spans.map { $0.endNs ?? $0.startNs }.max() ?? 0 }
    package var errorCount: Int { spans.filter(\.status.isError).count }
    package var usage: Usage { spans.reduce(Usage()) { $0 + $1.usage } }
}

package enum TraceFormat: String, Hashable, Sendable, Codable, CaseIterable {
    case otlp
    case openai
    case inspect
    case sweAgent = "swe-agent"
    case loupe
}

package enum SpanKind: String, Hashable, Sendable, Codable, CaseIterable {
    case agent, llm, tool, retrieval, embedding, eval, other
}

package enum SpanStatus: Hashable, Sendable {
    case unset
    case ok
    case error(String)

    package var isError: Bool {
        if case .error = self { return true }
        return false
    }

    package var code: String {
        switch self {
        case .unset: "unset"
        case .ok: "ok"
        case .error: "error"
        }
    }

    package var message: String? {
        if case .error(let message) = self { return message }
        return nil
    }
}

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
    package var attributes: [String: JSONValue] = [:]
    /// The span as its source wrote it (for `r` in the trace view and re-export).
    package var raw: JSONValue?

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

package struct Message: Hashable, Sendable {
    package var role: String
    package var text: String
    package var reasoning: String?
    package var toolCalls: [ToolCall] = []
    /// For a tool result: the call it answers.
    package var toolCallID: String?
    package var name: String?

    package init(role: String, text: String, toolCalls: [ToolCall] = [], toolCallID: String? = nil) {
        self.role = role
        self.text = text
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
    }
}

package struct ToolCall: Hashable, Sendable {
    package var id: String?
    package var name: String
    /// The arguments as the source wrote them (chat-completions sends a JSON string that may
    /// not parse: kept raw, and `argumentsError` says why it does not).
    package var arguments: String
    package var argumentsError: String?
    package var result: String?
    package var error: String?

    package init(id: String?, name: String, arguments: String, result: String? = nil, error: String? = nil) {
        self.id = id
        self.name = name
        self.arguments = arguments
        self.result = result
        self.error = error
        if !arguments.isEmpty {
            do { _ = try JSONValue.parse(arguments) } catch {
                argumentsError = "arguments are not valid JSON: \(error)"
            }
        }
    }
}

/// Token counts and cost; nil where the source did not say (never read as 0).
package struct Usage: Hashable, Sendable {
    package var inputTokens: Int?
    package var outputTokens: Int?
    package var cacheReadTokens: Int?
    package var cacheWriteTokens: Int?
    package var reasoningTokens: Int?
    /// Dollars, when the source recorded it.
    package var cost: Double?

    package init(
        inputTokens: Int? = nil, outputTokens: Int? = nil, cacheReadTokens: Int? = nil, cacheWriteTokens: Int? = nil,
        reasoningTokens: Int? = nil, cost: Double? = nil
    ) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.cacheReadTokens = cacheReadTokens
        self.cacheWriteTokens = cacheWriteTokens
        self.reasoningTokens = reasoningTokens
        self.cost = cost
    }

    package var isEmpty: Bool { self == Usage() }

    package static func + (a: Usage, b: Usage) -> Usage {
        func add<T: AdditiveArithmetic>(_ x: T?, _ y: T?) -> T? {
            x == nil && y == nil ? nil : (x ?? .zero) + (y ?? .zero)
        }
        return Usage(
            inputTokens: add(a.inputTokens, b.inputTokens), outputTokens: add(a.outputTokens, b.outputTokens),
            cacheReadTokens: add(a.cacheReadTokens, b.cacheReadTokens),
            cacheWriteTokens: add(a.cacheWriteTokens, b.cacheWriteTokens),
            reasoningTokens: add(a.reasoningTokens, b.reasoningTokens), cost: add(a.cost, b.cost))
    }
}

/// A scorer's verdict on a trace (Inspect scores, OTel evaluation results).
package struct Score: Hashable, Sendable {
    package var scorer: String
    package var value: JSONValue
    package var answer: String?
    package var explanation: String?

    package init(scorer: String, value: JSONValue, answer: String? = nil, explanation: String? = nil) {
        self.scorer = scorer
        self.value = value
        self.answer = answer
        self.explanation = explanation
    }
}

/// Malformed input: the file, where in it (line, zip member, span), the field, and what is wrong.
package struct TraceImportError: UserFacingError, Hashable, Sendable {
    /// The file, with the 1-based line for line-oriented input (JSON Lines).
    package var location: SourceLocation
    /// Where in the file when that is not a line: a zip member, a JSON path (`samples[3]`), a span.
    package var part: String?
    /// The field at fault, as a path from `part` (`events[2].id`).
    package var field: String?
    package var message: String

    package init(at location: SourceLocation, part: String? = nil, field: String? = nil, _ message: String) {
        self.location = location
        self.part = part
        self.field = field
        self.message = message
    }

    package init(file: String, line: Int? = nil, part: String? = nil, field: String? = nil, _ message: String) {
        self.init(at: SourceLocation(file: file, line: line), part: part, field: field, message)
    }

    /// `file:line: field: message` or `file:part: field: message`, without the parts not known.
    package var description: String {
        "\(location)" + (part.map { ":\($0)" } ?? "") + ": " + (field.map { "\($0): " } ?? "") + message
    }
}
