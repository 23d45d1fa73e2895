import Foundation
import LoupeAgents
import LoupeBase
import LoupeModels
import Synchronization

/// The agent's model in-process: SmolLM2-135M-Instruct generating on this machine, offered the
/// tools in SmolLM2's convention (``SmolLM2ToolFormat``) and constrained by a grammar built from
/// their schemas, so every reply with tools is a block of calls that parse, name real tools and
/// carry valid arguments, whatever a 135M model would have written unconstrained.
///
/// Each call's span keeps what a hosted model never shows: the prompt's tokens, each generated
/// token with its log-probability and top alternatives, time to first token, prefill and decode
/// speeds. The provider keeps the conversation's key/value cache from one call to the next, so
/// a ReAct step prefills only the turns added since the last.
package final class LocalModelProvider: ChatProvider {
    /// How many alternatives each generated token keeps in the trace.
    package static let alternatives = 5
    /// The most tokens one reply may take when the request does not say.
    package static let defaultMaxTokens = 512
    /// The most characters a string argument may take where its schema sets no lower bound: a
    /// 135M model can repeat itself inside a string until the token limit.
    package static let stringLimit = 200

    package let generator: Generator
    package let model: String
    private let tokens: TokenTable
    private let sampling: SamplingOptions
    private let toolChoice: ToolChoice
    private let cache = Mutex(PromptCache())

    package var label: String { "local" }

    /// - Parameters:
    ///   - sampling: greedy (the default) or tempered; `topLogprobs` is set to ``alternatives``.
    ///   - toolChoice: what a reply may be when tools are offered; the agent's default is
    ///     `required`, since `final_answer` is always among its tools.
    package init(
        generator: Generator, model: String = ModelLibrary.smolLM2Name, sampling: SamplingOptions = .greedy(),
        toolChoice: ToolChoice = .required
    ) {
        self.generator = generator
        self.model = model
        tokens = TokenTable(generator.tokenizer)
        var sampling = sampling
        sampling.topLogprobs = Self.alternatives
        self.sampling = sampling
        self.toolChoice = toolChoice
    }

    /// The conversation as SmolLM2 reads it: the tools in the system turn, calls as
    /// `<tool_call>` blocks, results as `<tool_response>` user turns (consecutive results in one).
    package func chatMessages(_ request: ChatRequest) -> [ChatMessage] {
        Self.chatMessages(request.messages, tools: request.tools)
    }

    /// `conversation` as SmolLM2 reads it with `tools` offered (none: no tool list in the system
    /// turn); shared with `loupe serve`'s OpenAI endpoint, which renders a client's tool turns the same way.
    package static func chatMessages(_ conversation: [Message], tools: [ToolSpec]) -> [ChatMessage] {
        var messages: [ChatMessage] = []
        var rest = conversation[...]
        var instructions = ""
        if let first = rest.first, first.role == "system" {
            instructions = first.text
            rest = rest.dropFirst()
        }
        if !tools.isEmpty {
            messages.append(.system(SmolLM2ToolFormat.systemPrompt(instructions, tools: tools)))
        } else if !instructions.isEmpty {
            messages.append(.system(instructions))
        }
        for message in rest {
            switch message.role {
            case "tool":
                let response = SmolLM2ToolFormat.response(message.text)
                if let last = messages.last, last.role == "user", last.content.hasSuffix("</tool_response>") {
                    messages[messages.count - 1].content += "\n" + response
                } else {
                    messages.append(.user(response))
                }
            case "assistant" where !message.toolCalls.isEmpty:
                let calls = message.toolCalls.map { SmolLM2ToolFormat.Call(name: $0.name, arguments: $0.arguments) }
                messages.append(.assistant(SmolLM2ToolFormat.render(calls)))
            default:
                messages.append(ChatMessage(role: message.role, content: message.text))
            }
        }
        return messages
    }

    /// The grammar a reply offered `tools` keeps to under `choice`: SmolLM2's tool-call block,
    /// string arguments held to ``stringLimit`` where their schema sets no bound.
    ///
    /// - Throws: ``GrammarError`` for a schema feature the grammar does not enforce, or a named
    ///   choice that is not offered.
    package static func toolGrammar(_ tools: [ToolSpec], choice: ToolChoice) throws(GrammarError) -> Grammar {
        try Grammar.toolCalls(tools, choice: choice, stringLimit: stringLimit)
    }

    /// A reply that begins with given tokens after a given prompt: the step a token fork
    /// regenerates (``AgentService/fork(_:at:edit:provider:limits:reporter:onStep:)``).
    package struct Fork: Sendable, Equatable {
        /// The prompt's token ids as the parent step recorded them (`loupe.llm.prompt_token_ids`).
        package var prompt: [Int32]
        /// The reply's first tokens: the parent's before the forked one, then the chosen
        /// alternative or the typed text's tokens.
        package var forced: [Int32]
        /// The forked token's index in the reply.
        package var tokenIndex: Int

        package init(prompt: [Int32], forced: [Int32], tokenIndex: Int) {
            self.prompt = prompt
            self.forced = forced
            self.tokenIndex = tokenIndex
        }
    }

    /// The span attribute a forked step carries when its forced tokens left the tool-call
    /// grammar: the answer's index of the first token it refused.
    package static let grammarLeftAttribute = "loupe.fork.grammar_left_at"

    package func complete(_ request: ChatRequest, onText: @escaping @Sendable (String) -> Void) throws(ProviderError)
        -> ChatResponse
    {
        try complete(request, forking: nil, onText: onText)
    }

    /// One model call; with `fork`, the reply is generated after the fork's prompt and begins
    /// with its forced tokens (``Generator/generate(prompt:forcing:options:reusing:isCancelled:)``).
    /// A forked reply the grammar could not follow (an alternative it refuses) is kept as text
    /// when its tool call does not parse: the fork shows what the model wrote from there.
    package func complete(
        _ request: ChatRequest, forking fork: Fork?, onText: @escaping @Sendable (String) -> Void
    ) throws(ProviderError) -> ChatResponse {
        var options = GenerationOptions()
        options.sampling = sampling
        options.maxTokens = request.maxTokens ?? Self.defaultMaxTokens
        if !request.tools.isEmpty {
            do {
                options.constraint = GrammarConstraint(
                    try Self.toolGrammar(request.tools, choice: toolChoice), tokens: tokens)
            } catch {
                throw ProviderError("the tools cannot be offered to the local model: \(error)", retryable: false)
            }
        }
        let deadline = request.secondsLeft.map { Date().addingTimeInterval($0) }
        let generation: Generation
        let forced: ForcedGeneration?
        do {
            let prompt = try fork?.prompt ?? generator.prompt(chatMessages(request))
            let context = generator.model.configuration.contextLength
            guard prompt.count < context else {
                throw ProviderError(
                    "the conversation is \(prompt.count) tokens, beyond the model's context of \(context)",
                    retryable: false)
            }
            options.context = min(context, prompt.count + max(options.maxTokens, 1))
            let isCancelled = { deadline.map { Date() >= $0 } ?? false }
            if let fork {
                let made = try cache.withLock { (cache: inout PromptCache) throws(ModelError) -> ForcedGeneration in
                    try generator.generate(
                        prompt: prompt, forcing: fork.forced, options: options, reusing: &cache,
                        isCancelled: isCancelled)
                }
                forced = made
                generation = made.generation
                if !generation.text.isEmpty { onText(generation.text) }
            } else {
                forced = nil
                generation = try cache.withLock { (cache: inout PromptCache) throws(ModelError) -> Generation in
                    try generator.generate(
                        prompt: prompt, options: options, reusing: &cache, isCancelled: isCancelled,
                        onText: { text, _ in if !text.isEmpty { onText(text) } })
                }
            }
        } catch let error as ProviderError {
            throw error
        } catch {
            throw ProviderError("the local model failed: \(error)", retryable: false)
        }
        var message = Message(role: "assistant", text: generation.text)
        var finish: String
        switch generation.stopReason {
        case .eos, .word: finish = "stop"
        case .limit: finish = "length"
        case .cancelled: finish = "cancelled"
        }
        do {
            if let calls = try SmolLM2ToolFormat.calls(in: generation.text), !calls.isEmpty {
                message.toolCalls = calls.enumerated().map { index, call in
                    ToolCall(id: "call_\(index)", name: call.name, arguments: call.arguments)
                }
                message.text = ""
                finish = "tool_calls"
            }
        } catch {
            // Only a reply cut off (the token limit, the time limit) leaves a block unfinished:
            // it is no answer, and reading it as the final one would score a broken call. A
            // fork's reply that left the grammar is what the model wrote there: kept as text.
            guard let forced, forced.grammarRefusedAt != nil else {
                throw ProviderError(
                    "the reply stopped (\(generation.stopReason.rawValue)) inside a tool call after "
                        + "\(generation.tokens.count) tokens: \(error)", retryable: false)
            }
        }
        var attributes = attributes(generation, options: options)
        if let fork, let forced {
            attributes["loupe.fork.token_index"] = .number(Double(fork.tokenIndex))
            attributes["loupe.fork.forced_tokens"] = .number(Double(forced.forcedCount))
            if let left = forced.grammarLeft {
                // The forced token is honoured and the model goes on unconstrained (see
                // ``Generator/generate(prompt:forcing:options:reusing:isCancelled:)``): said here,
                // so the trace shows a reply that left the grammar as such.
                attributes["loupe.llm.grammar"] = .string(
                    "tool_calls (\(toolChoice)), left at token \(left.index): the forced text is outside it")
                attributes[Self.grammarLeftAttribute] = .number(Double(left.index))
                attributes["loupe.fork.grammar_left"] = .string(left.summary)
            }
        }
        return ChatResponse(
            message: message,
            usage: Usage(
                inputTokens: generation.promptIDs.count, outputTokens: generation.tokens.count,
                cacheReadTokens: generation.timings.cachedPromptTokens),
            model: model, finishReason: finish, attributes: attributes)
    }

    /// The generation as span attributes (`loupe.llm.*`).
    func attributes(_ generation: Generation, options: GenerationOptions) -> [String: JSONValue] {
        let tokenizer = generator.tokenizer
        func rounded(_ value: Double, _ places: Double = 1e4) -> JSONValue {
            .number((value * places).rounded() / places)
        }
        let timings = generation.timings
        var attributes: [String: JSONValue] = [
            "gen_ai.request.temperature": .number(Double(options.sampling.temperature)),
            "gen_ai.request.seed": .number(Double(options.sampling.seed)),
            "gen_ai.request.max_tokens": .number(Double(options.maxTokens)),
            "loupe.llm.prompt_tokens": .number(Double(timings.promptTokens)),
            "loupe.llm.prompt_token_ids": .array(generation.promptIDs.map { .number(Double($0)) }),
            "loupe.llm.cached_prompt_tokens": .number(Double(timings.cachedPromptTokens)),
            GeneratedTokens.attribute: GeneratedTokens.attributeValue([
                GeneratedTokens(generation.tokens, piece: tokenizer.piece)
            ]),
            "loupe.llm.stop_reason": .string(generation.stopReason.rawValue),
            "loupe.llm.time_to_first_token_s": rounded(timings.timeToFirstTokenSeconds, 1e6),
            "loupe.llm.prefill_tokens_per_s": rounded(timings.prefillTokensPerSecond, 10),
            "loupe.llm.decode_tokens_per_s": rounded(timings.decodeTokensPerSecond, 10),
        ]
        if options.constraint != nil {
            attributes["loupe.llm.grammar"] = .string("tool_calls (\(toolChoice))")
        }
        return attributes
    }
}
