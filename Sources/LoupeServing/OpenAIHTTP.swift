import Foundation
import Hummingbird
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeOpenAI
import LoupeReceiver
import NIOCore
import Synchronization

/// The OpenAI routes on Hummingbird: `GET /v1/models`, `POST /v1/chat/completions` and
/// `POST /v1/completions`, answered as OpenAI does (JSON, or server-sent events ending in
/// `data: [DONE]` when `stream` is true), each request recorded as a trace (``CompletionTrace``).
///
/// The bearer token is checked as the OTLP receiver checks it (``ReceiverConfiguration/authorizes(_:)``);
/// a body past ``ReceiverConfiguration/maxBodyBytes`` is 413; a full queue is 429 with
/// `Retry-After`; a bad field is 400 naming it. A client that goes away cancels its sequences at
/// the next token: a streaming one when a write fails, any other when its connection's inbound
/// side closes (answered 499 in the metrics and the trace). `GET /metrics` is Prometheus' text
/// (``ServingMetrics``).
enum OpenAIHTTP {
    struct Setup: Sendable {
        var configuration: ReceiverConfiguration
        var scheduler: any CompletionScheduler
        var recorder: CompletionTrace.Recorder?
        /// The vocabulary as grammars read it, made once (`response_format`).
        var tokens: TokenTable
        var metrics: ServingMetrics
    }

    /// The status nginx made the convention for a request whose client closed the connection first.
    static let clientClosedStatus = 499

    static func router(_ setup: Setup) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("v1/models") { request, _ -> Response in
            if let refusal = refuse(request, setup) { return refusal }
            let model = JSONValue.object(
                JSONObject([
                    ("id", .string(setup.scheduler.modelName)), ("object", "model"), ("created", .number(0)),
                    ("owned_by", "loupe"),
                ]))
            return json(200, .object(JSONObject([("object", "list"), ("data", .array([model]))])))
        }
        router.get("metrics") { request, _ -> Response in
            if let refusal = refuse(request, setup) { return refusal }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: setup.metrics.exposition())))
        }
        router.post("v1/chat/completions") { request, _ -> Response in
            let response = await complete(request, kind: .chat, setup)
            setup.metrics.answered(status: Int(response.status.code))
            return response
        }
        router.post("v1/completions") { request, _ -> Response in
            let response = await complete(request, kind: .completion, setup)
            setup.metrics.answered(status: Int(response.status.code))
            return response
        }
        return router
    }

    /// Whether a request's client is still there, and the sequences to cancel once it is not.
    private final class Departure: Sendable {
        private struct State {
            var gone = false
            var cancels: [@Sendable () -> Void] = []
        }

        private let state = Mutex(State())

        var isGone: Bool { state.withLock { $0.gone } }

        /// Cancels `ticket` when the client leaves, or at once if it has.
        func watch(_ ticket: CompletionTicket) {
            let gone = state.withLock { state -> Bool in
                if !state.gone { state.cancels.append(ticket.cancel) }
                return state.gone
            }
            if gone { ticket.cancel() }
        }

        func leave() {
            let cancels = state.withLock { state -> [@Sendable () -> Void] in
                state.gone = true
                defer { state.cancels = [] }
                return state.cancels
            }
            for cancel in cancels { cancel() }
        }
    }

    /// 401 without the token; nil when the request may go on.
    private static func refuse(_ request: Request, _ setup: Setup) -> Response? {
        guard setup.configuration.authorizes(request.headers[.authorization]) else {
            var response = failure(
                OpenAIError(
                    status: 401, type: "invalid_request_error",
                    message: "a bearer token is required (Authorization: Bearer …, the client's api_key)",
                    code: "invalid_api_key"))
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return nil
    }

    /// How long a request's body may take to arrive: a client that sends headers and then trickles
    /// is answered 408 and let go, so it holds a connection for at most this long and never a model slot
    /// (the body is read before anything is queued).
    static let bodyDeadlineSeconds = 30

    /// The body, or nil when it has not all arrived within `seconds`.
    private static func collect(_ body: RequestBody, upTo limit: Int, within seconds: Int) async throws
        -> ByteBuffer?
    {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    private static func complete(_ request: Request, kind: OpenAIRequest.Kind, _ setup: Setup) async -> Response {
        if let refusal = refuse(request, setup) { return refusal }
        // The connection is watched while the request is answered, so a client that closes it
        // cancels its sequences even when no byte is being written to it.
        let departure = Departure()
        // W3C Trace Context: a traced client's span, which the request's trace joins.
        let parent = TraceParent(header: request.headers[.init("traceparent")!])
        do {
            var response = try await request.body.consumeWithInboundCloseHandler { body in
                await complete(body, kind: kind, setup, departure: departure, parent: parent)
            } onInboundClosed: {
                departure.leave()
            }
            // Watching reads the connection past this request, so it cannot carry another.
            response.headers[.connection] = "close"
            return response
        } catch {
            return failure(OpenAIError(status: 500, type: "server_error", message: "\(error)"))
        }
    }

    private static func complete(
        _ request: RequestBody, kind: OpenAIRequest.Kind, _ setup: Setup, departure: Departure, parent: TraceParent?
    ) async -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let startedWall = Date()
        let limit = setup.configuration.maxBodyBytes
        let body: ByteBuffer
        do {
            guard let collected = try await collect(request, upTo: limit, within: bodyDeadlineSeconds) else {
                return failure(
                    OpenAIError(
                        status: 408, type: "invalid_request_error",
                        message: "the body did not arrive within \(bodyDeadlineSeconds) s"))
            }
            body = collected
        } catch {
            return failure(
                OpenAIError(
                    status: 413, type: "invalid_request_error", message: "the body is larger than \(limit) bytes"))
        }
        let parsed: OpenAIRequest
        do {
            let value = try JSONValue.parse(Data(body.readableBytesView))
            parsed = try OpenAIRequest(value, kind: kind, defaultSeed: UInt64.random(in: 0...UInt64.max))
        } catch let error as OpenAIError {
            return failure(error)
        } catch {
            return failure(.invalid("the body is not JSON: \(error)", param: nil))
        }
        let scheduler = setup.scheduler
        guard parsed.model == scheduler.modelName else {
            return failure(
                OpenAIError(
                    status: 404, type: "invalid_request_error",
                    message: "The model '\(UntrustedText.sanitized(parsed.model))' does not exist; this server "
                        + "serves \(scheduler.modelName)", param: "model", code: "model_not_found"))
        }
        let prompt: [Int32]
        do {
            switch kind {
            case .chat: prompt = try scheduler.generator.prompt(parsed.messages)
            case .completion: prompt = scheduler.generator.tokenizer.encode(parsed.prompt)
            }
        } catch {
            return failure(.invalid("\(error)", param: kind == .chat ? "messages" : "prompt"))
        }
        if prompt.isEmpty { return failure(.invalid("the prompt has no tokens", param: "prompt")) }
        let context = scheduler.generator.model.configuration.contextLength
        if prompt.count >= context {
            return failure(
                .invalid(
                    "the prompt is \(prompt.count) tokens; the model's context is \(context) tokens",
                    param: kind == .chat ? "messages" : "prompt", code: "context_length_exceeded"))
        }
        var exchange = Exchange(
            request: parsed, prompt: prompt, id: CompletionTrace.newID(), startedNs: started, startedWall: startedWall)
        exchange.parent = parent
        // Every choice is queued up front, so a full queue refuses the request before any answer.
        var tickets: [CompletionTicket] = []
        for index in 0..<parsed.n {
            var options = parsed.options
            options.sampling.seed &+= UInt64(index)
            options.constraint = parsed.grammar.map { GrammarConstraint($0, tokens: setup.tokens) }
            do {
                tickets.append(try scheduler.submit(CompletionJob(prompt: prompt, options: options)))
            } catch {
                for ticket in tickets { ticket.cancel() }
                let status = error == .stopping ? 503 : 429
                var response = failure(
                    OpenAIError(
                        status: status, type: status == 429 ? "requests" : "server_error", message: error.description,
                        code: status == 429 ? "rate_limit_exceeded" : nil))
                response.headers[.retryAfter] = "1"
                return response
            }
        }
        let metrics = setup.metrics
        metrics.queued(tickets.count, promptTokens: prompt.count)
        if parsed.stream {
            let tokenizer = scheduler.generator.tokenizer
            let recorder = setup.recorder
            let model = scheduler.modelName
            let chosen = tickets
            let snapshot = exchange
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    var exchange = snapshot
                    await stream(
                        &exchange, tickets: chosen, writer: &writer, tokenizer: tokenizer, model: model,
                        recorder: recorder)
                    metrics.left(chosen.count)
                    metrics.record(exchange)
                })
        }
        for ticket in tickets { departure.watch(ticket) }
        defer { metrics.left(tickets.count) }
        for (index, ticket) in tickets.enumerated() {
            do {
                try await withTaskCancellationHandler {
                    for try await event in ticket.events {
                        exchange.note(event, choice: index)
                    }
                } onCancel: {
                    ticket.cancel()
                }
            } catch {
                for ticket in tickets { ticket.cancel() }
                exchange.failure = "\(error)"
                metrics.record(exchange)
                await setup.recorder?.record(
                    exchange, model: scheduler.modelName, tokenizer: scheduler.generator.tokenizer)
                return failure(OpenAIError(status: 500, type: "server_error", message: "\(error)"))
            }
        }
        metrics.record(exchange)
        if departure.isGone {
            exchange.failure = "the client went away: the answer was cancelled"
            await setup.recorder?.record(
                exchange, model: scheduler.modelName, tokenizer: scheduler.generator.tokenizer)
            // Nobody reads it; the status is for the metrics.
            return failure(
                OpenAIError(
                    status: clientClosedStatus, type: "invalid_request_error",
                    message: "the client closed the connection before the answer"))
        }
        await setup.recorder?.record(exchange, model: scheduler.modelName, tokenizer: scheduler.generator.tokenizer)
        return json(200, exchange.response(model: scheduler.modelName, tokenizer: scheduler.generator.tokenizer))
    }

    /// Writes the choices as server-sent events; a write that fails (the client left) cancels them all.
    private static func stream(
        _ exchange: inout Exchange, tickets: [CompletionTicket], writer: inout any ResponseBodyWriter,
        tokenizer: BPETokenizer, model: String, recorder: CompletionTrace.Recorder?
    ) async {
        func send(_ value: JSONValue, _ writer: inout any ResponseBodyWriter) async throws {
            try await writer.write(ByteBuffer(string: "data: " + value.compactJSON + "\n\n"))
        }
        do {
            for (index, ticket) in tickets.enumerated() {
                if exchange.request.kind == .chat {
                    try await send(
                        exchange.chunk(
                            choice: index, delta: "", role: true, tokens: [], model: model, tokenizer: tokenizer),
                        &writer)
                }
                // With tools offered, the reply is read as it comes: text, or calls streamed as OpenAI
                // streams them; a token that sends nothing yet keeps its log-probability for the next chunk.
                var reader = exchange.request.toolChoice == nil ? nil : ToolCallStream()
                var held: [GeneratedToken] = []
                for try await event in ticket.events {
                    exchange.note(event, choice: index)
                    guard case .text(let text, let token) = event else { continue }
                    if reader == nil {
                        if !text.isEmpty || token != nil {
                            try await send(
                                exchange.chunk(
                                    choice: index, delta: text, role: false, tokens: token.map { [$0] } ?? [],
                                    model: model, tokenizer: tokenizer), &writer)
                        }
                        continue
                    }
                    if let token { held.append(token) }
                    for delta in reader?.append(text) ?? [] {
                        try await send(
                            exchange.chunk(
                                choice: index, toolCall: delta, tokens: held, model: model, tokenizer: tokenizer),
                            &writer)
                        held = []
                    }
                }
                for delta in reader?.finish() ?? [] {
                    try await send(
                        exchange.chunk(
                            choice: index, toolCall: delta, tokens: held, model: model, tokenizer: tokenizer),
                        &writer)
                    held = []
                }
                if !held.isEmpty {
                    try await send(
                        exchange.chunk(
                            choice: index, delta: "", role: false, tokens: held, model: model, tokenizer: tokenizer),
                        &writer)
                }
                try await send(exchange.finalChunk(choice: index, model: model), &writer)
            }
            if exchange.request.includeUsage { try await send(exchange.usageChunk(model: model), &writer) }
            await recorder?.record(exchange, model: model, tokenizer: tokenizer)
            try await writer.write(ByteBuffer(string: "data: [DONE]\n\n"))
            try await writer.finish(nil)
        } catch {
            for ticket in tickets { ticket.cancel() }
            exchange.failure = exchange.failure ?? "the client went away: the answer was cancelled"
            await recorder?.record(exchange, model: model, tokenizer: tokenizer)
        }
    }

    static func json(_ status: Int, _ value: JSONValue) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.compactJSON)))
    }

    static func failure(_ error: OpenAIError) -> Response { json(error.status, error.body) }
}
