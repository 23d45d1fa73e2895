import Foundation
import LoupeBase
import LoupeModels
import LoupeOpenAI

/// One request's answers as they arrive, and the OpenAI bodies made from them.
struct Exchange: Sendable {
    struct Choice: Sendable {
        var text = ""
        var tokens: [GeneratedToken] = []
        var generation: Generation?
        /// The calls of a reply that is a whole tool-call block (tools offered), or of one the
        /// token limit cut (``callsCut``); nil otherwise.
        var toolCalls: [SmolLM2ToolFormat.Call]?
        /// The block was cut by the token limit: the last call's arguments are as far as written.
        var callsCut = false
        /// When its last token came (monotonic nanoseconds).
        var lastTokenNs: UInt64?
    }

    let request: OpenAIRequest
    let prompt: [Int32]
    /// The response's id (`chatcmpl-…`, `cmpl-…` around it) and the trace's.
    let id: String
    let startedNs: UInt64
    let startedWall: Date
    /// The caller's trace and span (its `traceparent` header): the request's trace joins it.
    var parent: TraceParent?
    var choices: [Choice]
    /// When the first token of any choice came (monotonic nanoseconds).
    var firstTokenNs: UInt64?
    var endedNs: UInt64?
    /// Nanoseconds between consecutive tokens of each choice, in arrival order (`/metrics`).
    var tokenGapsNs: [UInt64] = []
    /// Why the request did not end well, when it did not.
    var failure: String?

    init(request: OpenAIRequest, prompt: [Int32], id: String, startedNs: UInt64, startedWall: Date) {
        self.request = request
        self.prompt = prompt
        self.id = id
        self.startedNs = startedNs
        self.startedWall = startedWall
        choices = Array(repeating: Choice(), count: request.n)
    }

    mutating func note(_ event: CompletionEvent, choice index: Int) {
        switch event {
        case .text(let text, let token):
            if token != nil {
                let now = DispatchTime.now().uptimeNanoseconds
                if firstTokenNs == nil { firstTokenNs = now }
                if let last = choices[index].lastTokenNs { tokenGapsNs.append(now - last) }
                choices[index].lastTokenNs = now
            }
            choices[index].text += text
            if let token { choices[index].tokens.append(token) }
        case .finished(let generation):
            choices[index].generation = generation
            if request.toolChoice != nil {
                choices[index].toolCalls = try? SmolLM2ToolFormat.calls(in: choices[index].text)
                // A block the token limit cut answers as OpenAI's do: the calls begun (those whose name
                // is whole), the last one's arguments as far as written (not JSON), and `length`
                // saying so; a stream has sent the same.
                if choices[index].toolCalls == nil, generation.stopReason == .limit,
                    let begun = ToolCallStream.begunCalls(in: choices[index].text)
                {
                    choices[index].toolCalls = begun.map {
                        SmolLM2ToolFormat.Call(name: $0.name, arguments: $0.arguments)
                    }
                    choices[index].callsCut = true
                }
            }
            endedNs = DispatchTime.now().uptimeNanoseconds
        }
    }

    /// Call `call` of choice `choice`'s id: unique to this response, the same streamed or not.
    func toolCallID(choice: Int, call: Int) -> String { "call_\(id.prefix(16))_\(choice)_\(call)" }

    /// Why choice `index` ended, in OpenAI's words: `tool_calls` for a reply that called tools,
    /// `length` for one whose calls the token limit cut.
    func finishReason(choice index: Int) -> JSONValue {
        if let calls = choices[index].toolCalls, !calls.isEmpty, !choices[index].callsCut { return "tool_calls" }
        return Self.finishReason(choices[index].generation)
    }

    /// Choice `index`'s text as the client reads it: nil for a reply that called tools, empty
    /// for a block of no calls.
    func content(choice index: Int) -> String? {
        guard let calls = choices[index].toolCalls else { return choices[index].text }
        return calls.isEmpty ? "" : nil
    }

    /// Choice `index`'s calls as chat completions list them, `[{id, type, function: {name, arguments}}]`.
    func toolCallsValue(choice index: Int) -> [JSONValue] {
        (choices[index].toolCalls ?? []).enumerated().map { call, value in
            .object(
                JSONObject([
                    ("id", .string(toolCallID(choice: index, call: call))), ("type", "function"),
                    (
                        "function",
                        .object(JSONObject([("name", .string(value.name)), ("arguments", .string(value.arguments))]))
                    ),
                ]))
        }
    }

    var responseID: String { (request.kind == .chat ? "chatcmpl-" : "cmpl-") + id }
    var created: JSONValue { .number(startedWall.timeIntervalSince1970.rounded(.down)) }
    var completionTokens: Int { choices.reduce(0) { $0 + $1.tokens.count } }

    /// OpenAI's words for why a choice ended: `stop` (end of turn or a stop string), `length`.
    static func finishReason(_ generation: Generation?) -> JSONValue {
        switch generation?.stopReason {
        case .eos?, .word?: "stop"
        case .limit?: "length"
        case .cancelled?, nil: .null
        }
    }

    var usage: JSONValue {
        .object(
            JSONObject([
                ("prompt_tokens", .number(Double(prompt.count))),
                ("completion_tokens", .number(Double(completionTokens))),
                ("total_tokens", .number(Double(prompt.count * request.n + completionTokens))),
            ]))
    }

    /// The whole answer (`stream: false`).
    func response(model: String, tokenizer: BPETokenizer) -> JSONValue {
        let list = choices.enumerated().map { index, choice -> JSONValue in
            let logprobs = request.logprobs ? logprobsValue(choice.tokens, tokenizer: tokenizer) : .null
            let reason = finishReason(choice: index)
            switch request.kind {
            case .chat:
                var message = JSONObject([
                    ("role", "assistant"), ("content", content(choice: index).map(JSONValue.string) ?? .null),
                ])
                let calls = toolCallsValue(choice: index)
                if !calls.isEmpty { message["tool_calls"] = .array(calls) }
                return .object(
                    JSONObject([
                        ("index", .number(Double(index))), ("message", .object(message)), ("logprobs", logprobs),
                        ("finish_reason", reason),
                    ]))
            case .completion:
                return .object(
                    JSONObject([
                        ("index", .number(Double(index))), ("text", .string(choice.text)), ("logprobs", logprobs),
                        ("finish_reason", reason),
                    ]))
            }
        }
        return .object(
            JSONObject([
                ("id", .string(responseID)), ("object", request.kind == .chat ? "chat.completion" : "text_completion"),
                ("created", created), ("model", .string(model)), ("choices", .array(list)), ("usage", usage),
            ]))
    }

    /// A streamed piece of one choice: its new text and the tokens that made it.
    func chunk(
        choice index: Int, delta text: String, role: Bool, tokens: [GeneratedToken], model: String,
        tokenizer: BPETokenizer
    ) -> JSONValue {
        var delta = JSONObject()
        if role { delta["role"] = "assistant" }
        delta["content"] = .string(text)
        return chunk(choice: index, delta: delta, text: text, tokens: tokens, model: model, tokenizer: tokenizer)
    }

    /// A streamed tool-call piece of chat choice `index`, as OpenAI streams it: a call's id, type
    /// and name first (arguments empty), then its arguments in pieces, each under the call's `index`.
    func chunk(
        choice index: Int, toolCall delta: ToolCallStream.Delta, tokens: [GeneratedToken], model: String,
        tokenizer: BPETokenizer
    ) -> JSONValue {
        let call: JSONObject
        switch delta {
        case .content(let text):
            return chunk(choice: index, delta: text, role: false, tokens: tokens, model: model, tokenizer: tokenizer)
        case .call(let number, let name):
            call = JSONObject([
                ("index", .number(Double(number))), ("id", .string(toolCallID(choice: index, call: number))),
                ("type", "function"), ("function", .object(JSONObject([("name", .string(name)), ("arguments", "")]))),
            ])
        case .arguments(let number, let text):
            call = JSONObject([
                ("index", .number(Double(number))), ("function", .object(JSONObject([("arguments", .string(text))]))),
            ])
        }
        return chunk(
            choice: index, delta: JSONObject([("tool_calls", .array([.object(call)]))]), text: "", tokens: tokens,
            model: model, tokenizer: tokenizer)
    }

    private func chunk(
        choice index: Int, delta: JSONObject, text: String, tokens: [GeneratedToken], model: String,
        tokenizer: BPETokenizer
    ) -> JSONValue {
        let logprobs = request.logprobs && !tokens.isEmpty ? logprobsValue(tokens, tokenizer: tokenizer) : .null
        let choice: JSONValue
        switch request.kind {
        case .chat:
            choice = .object(
                JSONObject([
                    ("index", .number(Double(index))), ("delta", .object(delta)), ("logprobs", logprobs),
                    ("finish_reason", .null),
                ]))
        case .completion:
            choice = .object(
                JSONObject([
                    ("index", .number(Double(index))), ("text", .string(text)), ("logprobs", logprobs),
                    ("finish_reason", .null),
                ]))
        }
        return chunkEnvelope([choice], model: model)
    }

    /// The chunk that says why a choice ended.
    func finalChunk(choice index: Int, model: String) -> JSONValue {
        var choice = JSONObject([("index", .number(Double(index)))])
        switch request.kind {
        case .chat: choice["delta"] = .object(JSONObject())
        case .completion: choice["text"] = ""
        }
        choice["logprobs"] = .null
        choice["finish_reason"] = finishReason(choice: index)
        return chunkEnvelope([.object(choice)], model: model)
    }

    /// The last chunk when `stream_options.include_usage`: no choices, the usage.
    func usageChunk(model: String) -> JSONValue {
        var envelope = chunkEnvelope([], model: model).object ?? JSONObject()
        envelope["usage"] = usage
        return .object(envelope)
    }

    private func chunkEnvelope(_ choices: [JSONValue], model: String) -> JSONValue {
        var object = JSONObject([
            ("id", .string(responseID)),
            ("object", request.kind == .chat ? "chat.completion.chunk" : "text_completion"), ("created", created),
            ("model", .string(model)), ("choices", .array(choices)),
        ])
        if request.includeUsage { object["usage"] = .null }
        return .object(object)
    }

    /// Chat: `{content: [{token, logprob, bytes, top_logprobs}]}`; completions: `{tokens,
    /// token_logprobs, top_logprobs, text_offset}`, as OpenAI shapes each.
    func logprobsValue(_ tokens: [GeneratedToken], tokenizer: BPETokenizer) -> JSONValue {
        func bytes(_ piece: String) -> JSONValue { .array(piece.utf8.map { .number(Double($0)) }) }
        switch request.kind {
        case .chat:
            let content = tokens.map { token -> JSONValue in
                let top = token.choice.alternatives.map { alternative -> JSONValue in
                    let piece = tokenizer.piece(alternative.id)
                    return .object(
                        JSONObject([
                            ("token", .string(piece)), ("logprob", .number(Double(alternative.logprob))),
                            ("bytes", bytes(piece)),
                        ]))
                }
                return .object(
                    JSONObject([
                        ("token", .string(token.piece)), ("logprob", .number(Double(token.choice.token.logprob))),
                        ("bytes", bytes(token.piece)), ("top_logprobs", .array(top)),
                    ]))
            }
            return .object(JSONObject([("content", .array(content))]))
        case .completion:
            var offset = 0
            var offsets: [JSONValue] = []
            for token in tokens {
                offsets.append(.number(Double(offset)))
                offset += token.piece.count
            }
            let top = tokens.map { token -> JSONValue in
                .object(
                    JSONObject(
                        token.choice.alternatives.map { (tokenizer.piece($0.id), .number(Double($0.logprob))) }))
            }
            return .object(
                JSONObject([
                    ("tokens", .array(tokens.map { .string($0.piece) })),
                    ("token_logprobs", .array(tokens.map { .number(Double($0.choice.token.logprob)) })),
                    ("top_logprobs", .array(top)), ("text_offset", .array(offsets)),
                ]))
        }
    }
}
