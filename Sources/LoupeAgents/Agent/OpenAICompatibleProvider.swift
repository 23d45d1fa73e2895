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
    /// Error bodies can echo the key (a 401's "Incorrect API key provided: …"), and so can a
    /// model that was shown it; errors and answers end up in spans, which the workspace stores.
    private var redactor: SecretRedactor { SecretRedactor(secrets: [apiKey, baseURL.password]) }

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
        var body: JSONObject = [
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
        var object: JSONObject = ["role": .string(message.role), "content": .string(message.text)]
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
        if let apiKey, !apiKey.isEmpty {
            urlRequest.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
        } else if let parts = URLComponents(url: baseURL, resolvingAgainstBaseURL: false), let user = parts.user {
            // A base URL's `user:password@` is HTTP Basic credentials (URLSession on Linux sends none).
            let credentials = Data("\(user):\(parts.password ?? "")".utf8).base64EncodedString()
            urlRequest.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
        }
        urlRequest.httpBody = Data(body(request).compactJSON.utf8)

        let accumulator = StreamAccumulator(model: model)
        let events = SSEParser()
        let redactor = self.redactor
        let onText = { @Sendable (text: String) in onText(redactor.redact(text)) }
        let streaming = stream
        let failure = HTTPTransports.current.exchange(urlRequest, within: request.secondsLeft) { status in
            accumulator.status = status
        } data: { chunk in
            guard accumulator.status == 200 else { return accumulator.appendBody(chunk) }
            if !streaming { return accumulator.appendBody(chunk) }
            for event in events.feed(chunk) { accumulator.apply(event: event, onText: onText) }
        }
        if let failure {
            throw ProviderError(
                redactor.redactCredentials(in: "connection to \(baseURL.absoluteString) failed: \(failure)"),
                retryable: true)
        }
        guard accumulator.status == 200 else {
            let body = String(decoding: accumulator.errorBody, as: UTF8.self)
            let message = (try? JSONValue.parse(body))?["error"]?["message"]?.string ?? String(body.prefix(300))
            let status = accumulator.status
            throw ProviderError(
                redactor.redactCredentials(in: message), retryable: status == 429 || status >= 500 || status == 408,
                status: status)
        }
        if !stream {
            guard let value = try? JSONValue.parse(accumulator.errorBody) else {
                throw ProviderError("the response is not JSON", retryable: false, status: 200)
            }
            return redactor.redact(try Self.response(value, fallbackModel: model))
        }
        for event in events.finish() { accumulator.apply(event: event, onText: onText) }
        if let error = accumulator.streamError {
            throw ProviderError(redactor.redactCredentials(in: error), retryable: false, status: 200)
        }
        guard accumulator.sawData else {
            throw ProviderError("the stream ended without any data event", retryable: true, status: 200)
        }
        return redactor.redact(accumulator.response())
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

extension SecretRedactor {
    /// The response with the secrets taken out of all the text a trace stores of it.
    func redact(_ response: ChatResponse) -> ChatResponse {
        var response = response
        response.message.text = redact(response.message.text)
        response.message.reasoning = response.message.reasoning.map(redact)
        for index in response.message.toolCalls.indices {
            response.message.toolCalls[index].arguments = redact(response.message.toolCalls[index].arguments)
        }
        return response
    }
}
