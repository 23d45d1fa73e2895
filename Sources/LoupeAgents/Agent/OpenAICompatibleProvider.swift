import Foundation
import LoupeBase
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A chat-completions client (`POST {base}/chat/completions`) with tool calling, streaming by
/// server-sent events: OpenAI, vLLM, llama.cpp's server and Ollama speak it. The API key is
/// held in memory only; it is sent as a bearer token and never written anywhere.
package struct OpenAICompatibleProvider: ChatProvider {
    package var baseURL: URL
    package var model: String
    package var stream: Bool
    package var timeout: TimeInterval
    private let apiKey: String?

    package var label: String { "openai-compatible" }

    package init(baseURL: URL, model: String, apiKey: String?, stream: Bool = true, timeout: TimeInterval = 120) {
        self.baseURL = baseURL
        self.model = model
        self.apiKey = apiKey
        self.stream = stream
        self.timeout = timeout
    }

    /// The request body: messages in chat-completions shape, the tools, streaming with usage.
    package func body(_ request: ChatRequest) -> JSONValue {
        var body: [String: JSONValue] = [
            "model": .string(model), "messages": .array(request.messages.map(Self.encode)),
        ]
        if !request.tools.isEmpty { body["tools"] = .array(request.tools.map(\.openAI)) }
        if let maxTokens = request.maxTokens { body["max_tokens"] = .number(Double(maxTokens)) }
        if stream {
            body["stream"] = .bool(true)
            body["stream_options"] = .object(["include_usage": .bool(true)])
        }
        return .object(body)
    }

    static func encode(_ message: Message) -> JSONValue {
        var object: [String: JSONValue] = ["role": .string(message.role), "content": .string(message.text)]
        if !message.toolCalls.isEmpty {
            object["tool_calls"] = .array(
                message.toolCalls.enumerated().map { i, call in
                    .object([
                        "id": .string(call.id ?? "call_\(i)"), "type": "function",
                        "function": .object(["name": .string(call.name), "arguments": .string(call.arguments)]),
                    ])
                })
            if message.text.isEmpty { object["content"] = .null }
        }
        if let id = message.toolCallID { object["tool_call_id"] = .string(id) }
        return .object(object)
    }

    package func complete(_ request: ChatRequest, onText: @escaping @Sendable (String) -> Void) throws(ProviderError)
        -> ChatResponse
    {
        var urlRequest = URLRequest(url: baseURL.appendingPathComponent("chat/completions"), timeoutInterval: timeout)
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if stream { urlRequest.setValue("text/event-stream", forHTTPHeaderField: "Accept") }
        if let apiKey, !apiKey.isEmpty { urlRequest.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        urlRequest.httpBody = Data(body(request).compactJSON.utf8)

        let accumulator = StreamAccumulator(model: model)
        let events = SSEParser()
        let exchange = HTTPExchange(request: urlRequest) { chunk in
            guard accumulator.status == 200 else { return accumulator.appendBody(chunk) }
            if !self.stream { return accumulator.appendBody(chunk) }
            for event in events.feed(chunk) { accumulator.apply(event: event, onText: onText) }
        } response: { status in
            accumulator.status = status
        }
        if let failure = exchange.run() {
            throw ProviderError("connection to \(baseURL.absoluteString) failed: \(failure)", retryable: true)
        }
        guard accumulator.status == 200 else {
            let body = String(decoding: accumulator.errorBody, as: UTF8.self)
            let message = (try? JSONValue.parse(body))?["error"]?["message"]?.string ?? String(body.prefix(300))
            let status = accumulator.status
            throw ProviderError(message, retryable: status == 429 || status >= 500 || status == 408, status: status)
        }
        if !stream {
            guard let value = try? JSONValue.parse(accumulator.errorBody) else {
                throw ProviderError("the response is not JSON", retryable: false, status: 200)
            }
            return try Self.response(value, fallbackModel: model)
        }
        for event in events.finish() { accumulator.apply(event: event, onText: onText) }
        if let error = accumulator.streamError { throw ProviderError(error, retryable: false, status: 200) }
        guard accumulator.sawData else {
            throw ProviderError("the stream ended without any data event", retryable: true, status: 200)
        }
        return accumulator.response()
    }

    /// A complete (non-streamed) chat-completions response.
    package static func response(_ value: JSONValue, fallbackModel: String) throws(ProviderError) -> ChatResponse {
        guard let choice = value["choices"]?.array?.first, let message = choice["message"] else {
            throw ProviderError("the response has no choices[0].message", retryable: false, status: 200)
        }
        var parsed = Message(role: "assistant", text: message["content"]?.string ?? "")
        parsed.toolCalls = ChatMessages.toolCalls(message["tool_calls"])
        parsed.reasoning = (message["reasoning_content"] ?? message["reasoning"])?.string
        return ChatResponse(
            message: parsed, usage: usage(value["usage"]), model: value["model"]?.string ?? fallbackModel,
            finishReason: choice["finish_reason"]?.string)
    }

    static func usage(_ value: JSONValue?) -> Usage {
        guard let value, value.object != nil else { return Usage() }
        return Usage(
            inputTokens: value["prompt_tokens"]?.int.map(Int.init),
            outputTokens: value["completion_tokens"]?.int.map(Int.init),
            cacheReadTokens: value["prompt_tokens_details"]?["cached_tokens"]?.int.map(Int.init),
            reasoningTokens: value["completion_tokens_details"]?["reasoning_tokens"]?.int.map(Int.init))
    }
}

/// Server-sent events: `field: value` lines, an event per blank line; only `data` matters here
/// (several `data` lines join with newlines; `:` lines are comments).
///
/// Thread-safety: any thread; `feed` and `finish` hold `lock` for all of their work, which is
/// what makes the unchecked conformance true.
package final class SSEParser: @unchecked Sendable {
    private var buffer: [UInt8] = []
    private var data: [String] = []
    private let lock = NSLock()

    package init() {}

    /// The events completed by `chunk` (chunks may split lines and events anywhere).
    package func feed(_ chunk: Data) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(contentsOf: chunk)
        var events: [String] = []
        var start = 0
        while let newline = buffer[start...].firstIndex(of: 0x0A) {
            var line = buffer[start..<newline]
            if line.last == 0x0D { line = line.dropLast() }
            start = newline + 1
            handle(String(decoding: line, as: UTF8.self), into: &events)
        }
        buffer.removeFirst(start)
        return events
    }

    /// Whatever the stream held after its last newline.
    package func finish() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        var events: [String] = []
        if !buffer.isEmpty { handle(String(decoding: buffer, as: UTF8.self), into: &events) }
        buffer = []
        handle("", into: &events)
        return events
    }

    private func handle(_ line: String, into events: inout [String]) {
        if line.isEmpty {
            if !data.isEmpty { events.append(data.joined(separator: "\n")) }
            data = []
        } else if line.hasPrefix("data:") {
            var value = line.dropFirst(5)
            if value.first == " " { value = value.dropFirst() }
            data.append(String(value))
        }
    }
}

/// Folds `chat.completion.chunk` events into one answer: text deltas appended, tool calls
/// assembled by their `index` (id and name in the first delta, arguments in pieces), usage from
/// the last chunk.
///
/// Thread-safety: any thread. URLSession's delegate queue writes it and the caller reads it once
/// the exchange is done; every access goes through one lock.
final class StreamAccumulator: Sendable {
    private struct State {
        var status = 0
        var errorBody = Data()
        var sawData = false
        var streamError: String?
        var text = ""
        var reasoning = ""
        var calls: [Int: (id: String?, name: String, arguments: String)] = [:]
        var usage = Usage()
        var model: String
        var finishReason: String?
    }

    private let state: Mutex<State>

    init(model: String) { state = Mutex(State(model: model)) }

    /// The HTTP status of the response (0 until it arrives).
    var status: Int {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// The body of a response that is not a stream of events (an error, or `stream: false`).
    var errorBody: Data { state.withLock { $0.errorBody } }
    /// True once an event carried JSON.
    var sawData: Bool { state.withLock { $0.sawData } }
    /// The error an event reported in the stream.
    var streamError: String? { state.withLock { $0.streamError } }

    func appendBody(_ chunk: Data) { state.withLock { $0.errorBody.append(chunk) } }

    func apply(event: String, onText: @Sendable (String) -> Void) {
        guard event != "[DONE]" else { return }
        guard let chunk = try? JSONValue.parse(event) else { return }
        let piece: String? = state.withLock { state in
            state.sawData = true
            if let error = chunk["error"] {
                state.streamError = error["message"]?.string ?? error.compactJSON
                return nil
            }
            if let name = chunk["model"]?.string { state.model = name }
            if let u = chunk["usage"], u.object != nil { state.usage = OpenAICompatibleProvider.usage(u) }
            guard let choice = chunk["choices"]?.array?.first else { return nil }
            if let reason = choice["finish_reason"]?.string { state.finishReason = reason }
            let delta = choice["delta"] ?? .object([:])
            if let piece = (delta["reasoning_content"] ?? delta["reasoning"])?.string { state.reasoning += piece }
            for call in delta["tool_calls"]?.array ?? [] {
                let index = call["index"]?.int.map(Int.init) ?? state.calls.count
                var entry = state.calls[index] ?? (id: nil, name: "", arguments: "")
                if let id = call["id"]?.string { entry.id = id }
                if let name = call["function"]?["name"]?.string { entry.name += name }
                if let arguments = call["function"]?["arguments"]?.string { entry.arguments += arguments }
                state.calls[index] = entry
            }
            guard let piece = delta["content"]?.string, !piece.isEmpty else { return nil }
            state.text += piece
            return piece
        }
        // Outside the lock: the callback may take its time (it draws the streamed text).
        if let piece { onText(piece) }
    }

    func response() -> ChatResponse {
        state.withLock { state in
            var message = Message(
                role: "assistant", text: state.text,
                toolCalls: state.calls.keys.sorted().map { state.calls[$0]! }.map {
                    ToolCall(id: $0.id, name: $0.name, arguments: $0.arguments)
                })
            if !state.reasoning.isEmpty { message.reasoning = state.reasoning }
            return ChatResponse(
                message: message, usage: state.usage, model: state.model, finishReason: state.finishReason)
        }
    }
}

/// One HTTP exchange through URLSession, delivering the body as it arrives; blocks until done.
///
/// Thread-safety: `failure` is written only on the session's serial delegate queue, before
/// `done` is signalled, and read by `run()` only after `done.wait()` returns: the semaphore
/// orders the two, which is why the unchecked conformance holds. The rest is immutable.
final class HTTPExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let request: URLRequest
    private let onData: (Data) -> Void
    private let onResponse: (Int) -> Void
    private let done = DispatchSemaphore(value: 0)
    private var failure: String?

    init(request: URLRequest, data: @escaping (Data) -> Void, response: @escaping (Int) -> Void) {
        self.request = request
        self.onData = data
        self.onResponse = response
    }

    /// Runs the exchange; the transport error, or nil when a response (of any status) arrived.
    func run() -> String? {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: queue)
        session.dataTask(with: request).resume()
        done.wait()
        session.finishTasksAndInvalidate()
        return failure
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        onResponse((response as? HTTPURLResponse)?.statusCode ?? 0)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) { onData(data) }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if let error { failure = error.localizedDescription }
        done.signal()
    }
}
