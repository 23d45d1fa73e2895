import Foundation
import Logging
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeOpenAI
import Synchronization

/// A served request as a trace: one span named `chat MODEL` (or `text_completion MODEL`) with
/// OpenTelemetry's GenAI attributes (operation, model, request parameters, usage, finish reasons,
/// messages), the time to first token (`gen_ai.server.time_to_first_token`, seconds, the
/// conventions' metric name) and every generated token with its log-probability and alternatives
/// (``GeneratedTokens``, `loupe.llm.tokens`). It goes through the OTLP importer's own mapping, so the Traces
/// panel shows it as it shows an instrumented client's span. A request that carried a W3C
/// `traceparent` is recorded in the caller's trace, under the caller's span (``TraceParent``).
enum CompletionTrace {
    /// 32 hex digits: the trace's id, and the response's id after its prefix.
    static func newID() -> String {
        (0..<2).map { _ in String(format: "%016llx", UInt64.random(in: 0...UInt64.max)) }.joined()
    }

    /// Hands each finished request to the receiver's ingest (the same queue and writer as OTLP).
    ///
    /// A trace that cannot be recorded loses that trace, not the answer, but not silently: the
    /// failures are counted (``notRecorded``, which `loupe serve` prints as it stops) and the
    /// first is logged as a warning while the server runs.
    final class Recorder: Sendable {
        /// The traces that were not recorded and why the first was not.
        struct Failures: Hashable, Sendable {
            var count = 0
            var first: String?

            /// "3 completion traces were not recorded: WHY", nil when every one was.
            var line: String? {
                guard count > 0, let first else { return nil }
                let traces = count == 1 ? "1 completion trace was" : "\(count) completion traces were"
                return "\(traces) not recorded: \(first)"
            }
        }

        let ingest: TraceIngest
        /// Attributes every request's span carries (how the server's model is steered).
        let attributes: JSONObject
        private let logger: Logger
        private let failures = Mutex(Failures())

        init(ingest: TraceIngest, attributes: JSONObject = [:], logger: Logger = Recorder.logger) {
            self.ingest = ingest
            self.attributes = attributes
            self.logger = logger
        }

        /// Warnings and worse, on standard error: the server's own logger keeps to critical.
        static var logger: Logger {
            var logger = Logger(label: "loupe.openai.traces")
            logger.logLevel = .warning
            return logger
        }

        var notRecorded: Failures { failures.withLock { $0 } }

        /// Stores `exchange`'s trace; a failure (the queue full, the workspace refusing it) loses
        /// that trace, not the answer, and is counted.
        func record(_ exchange: Exchange, model: String, tokenizer: BPETokenizer) async {
            do {
                let span = try CompletionTrace.span(
                    exchange, model: model, tokenizer: tokenizer, attributes: attributes)
                try await ingest.submit([span], source: "OpenAI")
            } catch {
                let why = UntrustedText.sanitized("\(error)")
                let first = failures.withLock { failures in
                    failures.count += 1
                    if failures.first == nil { failures.first = why }
                    return failures.count == 1
                }
                if first {
                    logger.warning("a completion trace was not recorded: \(why) (the answer was sent)")
                }
            }
        }
    }

    static func span(
        _ exchange: Exchange, model: String, tokenizer: BPETokenizer, attributes: JSONObject = [:]
    ) throws(TraceImportError) -> OTLPImporter.OTLPSpan {
        let request = exchange.request
        let operation = request.kind == .chat ? "chat" : "text_completion"
        var a = attributes
        a["gen_ai.operation.name"] = .string(operation)
        a["gen_ai.provider.name"] = "loupe"
        a["gen_ai.request.model"] = .string(model)
        a["gen_ai.response.model"] = .string(model)
        a["gen_ai.response.id"] = .string(exchange.responseID)
        a["gen_ai.request.max_tokens"] = .number(Double(request.options.maxTokens))
        a["gen_ai.request.temperature"] = .number(Double(request.options.sampling.temperature))
        a["gen_ai.request.top_p"] = .number(Double(request.options.sampling.topP))
        a["gen_ai.request.seed"] = .string(String(request.options.sampling.seed))
        a["gen_ai.request.choice.count"] = .number(Double(request.n))
        if !request.options.stops.isEmpty {
            a["gen_ai.request.stop_sequences"] = .array(request.options.stops.map(JSONValue.string))
        }
        a["gen_ai.usage.input_tokens"] = .number(Double(exchange.prompt.count))
        a["gen_ai.usage.output_tokens"] = .number(Double(exchange.completionTokens))
        a["gen_ai.response.finish_reasons"] = .array(
            exchange.choices.indices.map {
                exchange.finishReason(choice: $0).string.map(JSONValue.string) ?? "cancelled"
            })
        if let first = exchange.firstTokenNs {
            a["gen_ai.server.time_to_first_token"] = .number(Double(first - exchange.startedNs) / 1e9)
        }
        let speculated = exchange.choices.compactMap { $0.generation?.speculation }
        if !speculated.isEmpty {
            let drafted = speculated.reduce(0) { $0 + $1.drafted }
            let accepted = speculated.reduce(0) { $0 + $1.accepted }
            a["loupe.speculative.method"] = "prompt-lookup"
            a["loupe.speculative.drafted_tokens"] = .number(Double(drafted))
            a["loupe.speculative.accepted_tokens"] = .number(Double(accepted))
            a["loupe.speculative.acceptance_rate"] = .number(drafted > 0 ? Double(accepted) / Double(drafted) : 0)
        }
        if let user = request.user { a["user.id"] = .string(user) }
        a["loupe.request.stream"] = .bool(request.stream)
        let input: [JSONValue] =
            request.kind == .chat
            ? request.messages.map {
                .object(JSONObject([("role", .string($0.role)), ("content", .string($0.content))]))
            }
            : [.object(JSONObject([("role", "user"), ("content", .string(request.prompt))]))]
        a["gen_ai.input.messages"] = .array(input)
        a["gen_ai.output.messages"] = .array(
            exchange.choices.indices.map { index in
                var message = JSONObject([
                    ("role", "assistant"), ("content", .string(exchange.content(choice: index) ?? "")),
                    ("finish_reason", exchange.finishReason(choice: index)),
                ])
                let calls = exchange.toolCallsValue(choice: index)
                if !calls.isEmpty { message["tool_calls"] = .array(calls) }
                return .object(message)
            })
        if !request.tools.isEmpty {
            a["gen_ai.tool.definitions"] = .array(
                request.tools.map { tool in
                    .object(
                        JSONObject([
                            ("type", "function"), ("name", .string(tool.name)),
                            ("description", .string(tool.description)), ("parameters", tool.parameters),
                        ]))
                })
        }
        a[GeneratedTokens.attribute] = GeneratedTokens.attributeValue(
            exchange.choices.map { GeneratedTokens($0.tokens, piece: tokenizer.piece) })
        if let failure = exchange.failure { a["error.type"] = .string(failure) }
        let startNs = Int64(exchange.startedWall.timeIntervalSince1970 * 1e9)
        let elapsed = Int64((exchange.endedNs ?? DispatchTime.now().uptimeNanoseconds) - exchange.startedNs)
        let parts = OTLPImporter.SpanParts(
            traceID: exchange.parent?.traceID ?? exchange.id, spanID: String(exchange.id.prefix(16)),
            parentID: exchange.parent?.spanID, name: "\(operation) \(model)",
            startNs: startNs, endNs: startNs + elapsed, attributes: a, events: [],
            statusCode: exchange.failure == nil ? 1 : 2, statusMessage: exchange.failure)
        var span = try OTLPImporter.span(parts, file: "loupe serve", line: nil, path: "request")
        span.service = "loupe serve"
        return span
    }
}
