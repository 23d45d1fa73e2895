import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeModels

/// A `/v1/chat/completions` or `/v1/completions` request, read and checked field by field; a
/// field that is wrong is an ``OpenAIError`` naming it (`param`), as OpenAI answers.
package struct OpenAIRequest: Sendable {
    package enum Kind: Sendable { case chat, completion }

    package var kind: Kind
    package var model: String
    /// Chat: the conversation as the model reads it (tools and tool turns in SmolLM2's
    /// convention, ``LocalModelProvider/chatMessages(_:tools:)``). Completions: empty.
    package var messages: [ChatMessage] = []
    /// Chat: the tools offered to the model (`tools`); empty when none are, or `tool_choice` is `none`.
    package var tools: [ToolSpec] = []
    /// What a reply may be while tools are offered; nil when none are.
    package var toolChoice: ToolChoice?
    /// Completions: the prompt text.
    package var prompt = ""
    package var options = GenerationOptions()
    package var n = 1
    package var stream = false
    package var includeUsage = false
    /// Whether each token's log-probability is returned (chat `logprobs: true`; completions `logprobs: N`).
    package var logprobs = false
    package var user: String?
    /// The grammar the answer keeps to: `response_format`'s (`json_object`, `json_schema`), or
    /// the tool-call block of the tools offered.
    package var grammar: Grammar?

    /// The legacy function-calling fields, refused rather than ignored (`tools` replaces them).
    static let unsupported = ["functions", "function_call"]

    /// Reads `body` (the request's JSON) for `kind`; `defaultSeed` is the seed when none is given.
    package init(_ body: JSONValue, kind: Kind, defaultSeed: UInt64) throws(OpenAIError) {
        guard let object = body.object else {
            throw .invalid("the body must be a JSON object", param: nil)
        }
        self.kind = kind
        guard let model = object["model"]?.string, !model.isEmpty else {
            throw .invalid("you must provide a model parameter", param: "model")
        }
        self.model = model
        for name in Self.unsupported where object[name] != nil && object[name] != .null {
            throw .invalid(
                "\(name) is deprecated and not supported: use tools and tool_choice", param: name,
                code: "unsupported_parameter")
        }
        grammar = try Self.responseFormat(object["response_format"])
        switch kind {
        case .chat:
            let conversation = try Self.conversation(object["messages"])
            let offered = try Self.tools(object["tools"])
            toolChoice = try Self.toolChoice(object["tool_choice"], tools: offered)
            if let toolChoice {
                tools = offered
                if grammar != nil {
                    throw .invalid(
                        "response_format cannot be combined with tools: a reply keeps to one grammar "
                            + "(set tool_choice to none to use response_format)", param: "response_format")
                }
                do { grammar = try LocalModelProvider.toolGrammar(offered, choice: toolChoice) } catch {
                    throw .invalid(
                        "tools: \(error.description)", param: error.path.isEmpty ? "tool_choice" : "tools",
                        code: "unsupported_parameter")
                }
            }
            messages = LocalModelProvider.chatMessages(conversation, tools: tools)
        case .completion:
            prompt = try Self.prompt(object["prompt"])
            for name in ["tools", "tool_choice"] where object[name] != nil && object[name] != .null {
                throw .invalid("\(name) is only for /v1/chat/completions", param: name)
            }
        }
        var sampling = SamplingOptions()
        sampling.temperature = Float(try Self.number(object, "temperature", in: 0...2) ?? 1)
        sampling.topP = Float(try Self.number(object, "top_p", in: 0...1) ?? 1)
        if sampling.topP == 0 { throw .invalid("top_p 0: use a value in (0, 1]", param: "top_p") }
        if let seed = try Self.integer(object, "seed", in: Int64.min...Int64.max) {
            sampling.seed = UInt64(bitPattern: seed)
        } else {
            sampling.seed = defaultSeed
        }
        let newer = try Self.integer(object, "max_completion_tokens", in: 1...1_000_000)
        let older = try Self.integer(object, "max_tokens", in: 1...1_000_000)
        options.maxTokens = (newer ?? older).map { Int($0) } ?? 256
        n = Int(try Self.integer(object, "n", in: 1...8) ?? 1)
        stream = try Self.bool(object, "stream") ?? false
        if let streamOptions = object["stream_options"], streamOptions != .null {
            guard stream else {
                throw .invalid("stream_options is only allowed when stream is true", param: "stream_options")
            }
            guard let options = streamOptions.object else {
                throw .invalid("stream_options must be an object", param: "stream_options")
            }
            includeUsage = try Self.bool(options, "include_usage", path: "stream_options.include_usage") ?? false
        }
        options.stops = try Self.stops(object["stop"])
        switch kind {
        case .chat:
            logprobs = try Self.bool(object, "logprobs") ?? false
            let top = try Self.integer(object, "top_logprobs", in: 0...20)
            if let top, top > 0, !logprobs {
                throw .invalid("top_logprobs needs logprobs set to true", param: "top_logprobs")
            }
            sampling.topLogprobs = Int(top ?? 0)
        case .completion:
            if let top = try Self.integer(object, "logprobs", in: 0...5) {
                logprobs = true
                sampling.topLogprobs = Int(top)
            }
            if let echo = try Self.bool(object, "echo"), echo {
                throw .invalid("echo is not supported yet", param: "echo", code: "unsupported_parameter")
            }
        }
        options.sampling = sampling
        if let user = object["user"], user != .null {
            guard let text = user.string else { throw .invalid("user must be a string", param: "user") }
            self.user = text
        }
    }

    /// `text` (nil), `json_object` (any JSON object) or `json_schema` (a value its `schema` allows).
    private static func responseFormat(_ value: JSONValue?) throws(OpenAIError) -> Grammar? {
        guard let value, value != .null else { return nil }
        switch value["type"]?.string {
        case "text"?: return nil
        case "json_object"?: return .jsonObject
        case "json_schema"?:
            guard let schema = value["json_schema"]?["schema"], schema.object != nil else {
                throw .invalid(
                    "response_format.json_schema.schema must be a JSON schema object",
                    param: "response_format.json_schema.schema")
            }
            do { return try .json(schema: schema) } catch {
                throw .invalid(
                    "response_format.json_schema.schema: \(error.description)",
                    param: "response_format.json_schema.schema", code: "unsupported_parameter")
            }
        default:
            throw .invalid(
                "response_format.type must be text, json_object or json_schema", param: "response_format.type")
        }
    }

    /// The conversation: system, developer, user and assistant turns, an assistant's `tool_calls`,
    /// and `tool` turns answering them (`tool_call_id` naming a call made earlier).
    private static func conversation(_ value: JSONValue?) throws(OpenAIError) -> [Message] {
        guard let list = value?.array else {
            throw .invalid("messages must be an array of {role, content}", param: "messages")
        }
        guard !list.isEmpty else { throw .invalid("messages must not be empty", param: "messages") }
        var messages: [Message] = []
        var callIDs: Set<String> = []
        for (index, message) in list.enumerated() {
            let path = "messages[\(index)]"
            guard let role = message["role"]?.string else {
                throw .invalid("\(path).role must be a string", param: "\(path).role")
            }
            switch role {
            case "system", "developer", "user":
                messages.append(
                    Message(role: role == "developer" ? "system" : role, text: try content(message, path: path)))
            case "assistant":
                let calls = try toolCalls(message["tool_calls"], path: path + ".tool_calls")
                callIDs.formUnion(calls.compactMap(\.id))
                let text =
                    calls.isEmpty || (message["content"] ?? .null) != .null ? try content(message, path: path) : ""
                messages.append(Message(role: role, text: text, toolCalls: calls))
            case "tool":
                guard let id = message["tool_call_id"]?.string else {
                    throw .invalid("\(path).tool_call_id must be a string", param: "\(path).tool_call_id")
                }
                guard callIDs.contains(id) else {
                    throw .invalid(
                        "\(path): a tool message answers a call of an earlier assistant message, and none has id "
                            + "'\(UntrustedText.sanitized(id))'", param: "\(path).tool_call_id")
                }
                messages.append(Message(role: role, text: try content(message, path: path), toolCallID: id))
            default:
                throw .invalid(
                    "\(path).role '\(UntrustedText.sanitized(role))': use system, developer, user, assistant or tool",
                    param: "\(path).role")
            }
        }
        return messages
    }

    /// An assistant's `tool_calls`: `[{id, type: function, function: {name, arguments}}]`, the
    /// arguments a string holding a JSON object.
    private static func toolCalls(_ value: JSONValue?, path: String) throws(OpenAIError) -> [ToolCall] {
        guard let value, value != .null else { return [] }
        guard let list = value.array else {
            throw .invalid("\(path) must be an array of {id, type, function}", param: path)
        }
        var calls: [ToolCall] = []
        for (index, call) in list.enumerated() {
            let at = "\(path)[\(index)]"
            guard let id = call["id"]?.string else { throw .invalid("\(at).id must be a string", param: "\(at).id") }
            guard call["type"]?.string == "function" else {
                throw .invalid("\(at).type must be \"function\"", param: "\(at).type")
            }
            guard let name = call["function"]?["name"]?.string else {
                throw .invalid("\(at).function.name must be a string", param: "\(at).function.name")
            }
            guard let arguments = call["function"]?["arguments"]?.string,
                (try? JSONValue.parse(arguments))?.object != nil
            else {
                throw .invalid(
                    "\(at).function.arguments must be a string holding a JSON object", param: "\(at).function.arguments"
                )
            }
            calls.append(ToolCall(id: id, name: name, arguments: arguments))
        }
        return calls
    }

    /// `tools`: `[{type: function, function: {name, description, parameters}}]`, names as OpenAI
    /// allows them (letters, digits, `_` and `-`, at most 64).
    private static func tools(_ value: JSONValue?) throws(OpenAIError) -> [ToolSpec] {
        guard let value, value != .null else { return [] }
        guard let list = value.array, !list.isEmpty else {
            throw .invalid(
                "tools must be a non-empty array of {type: function, function: {name, description, parameters}}",
                param: "tools")
        }
        var tools: [ToolSpec] = []
        for (index, tool) in list.enumerated() {
            let path = "tools[\(index)]"
            guard tool["type"]?.string == "function", let function = tool["function"], function.object != nil else {
                throw .invalid(
                    "\(path) must be {type: \"function\", function: {name, description, parameters}}", param: path)
            }
            guard let name = function["name"]?.string, (1...64).contains(name.utf8.count),
                name.utf8.allSatisfy({
                    $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0)
                        || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                })
            else {
                throw .invalid(
                    "\(path).function.name must be 1 to 64 letters, digits, _ or -", param: "\(path).function.name")
            }
            var description = ""
            if let text = function["description"], text != .null {
                guard let string = text.string else {
                    throw .invalid(
                        "\(path).function.description must be a string", param: "\(path).function.description")
                }
                description = string
            }
            let parameters = function["parameters"] ?? .null
            guard parameters == .null || parameters.object != nil else {
                throw .invalid(
                    "\(path).function.parameters must be a JSON schema object", param: "\(path).function.parameters")
            }
            tools.append(
                ToolSpec(
                    name: name, description: description,
                    parameters: parameters == .null
                        ? .object(["type": "object", "properties": .object([:])]) : parameters))
        }
        return tools
    }

    /// `tool_choice`: `none` (nil: no tools offered), `auto` (the default with tools), `required`,
    /// or `{type: function, function: {name}}`.
    private static func toolChoice(_ value: JSONValue?, tools: [ToolSpec]) throws(OpenAIError) -> ToolChoice? {
        let choice: ToolChoice?
        switch value {
        case nil, .null?: return tools.isEmpty ? nil : .auto
        case .string("none")?: return nil
        case .string("auto")?: choice = .auto
        case .string("required")?: choice = .required
        case .object?:
            guard value?["type"]?.string == "function", let name = value?["function"]?["name"]?.string else {
                throw .invalid(
                    "tool_choice must be none, auto, required or {type: \"function\", function: {name}}",
                    param: "tool_choice")
            }
            guard tools.contains(where: { $0.name == name }) else {
                throw .invalid(
                    "tool_choice names '\(UntrustedText.sanitized(name))', which is not among the tools",
                    param: "tool_choice.function.name")
            }
            choice = .named(name)
        default:
            throw .invalid(
                "tool_choice must be none, auto, required or {type: \"function\", function: {name}}",
                param: "tool_choice")
        }
        guard !tools.isEmpty else { throw .invalid("tool_choice needs tools to choose from", param: "tool_choice") }
        return choice
    }

    /// A message's text: a string, or text parts (`[{"type": "text", "text": …}]`).
    private static func content(_ message: JSONValue, path: String) throws(OpenAIError) -> String {
        switch message["content"] {
        case .string(let text)?: return text
        case .array(let parts)?:
            var text = ""
            for (index, part) in parts.enumerated() {
                guard part["type"]?.string == "text", let piece = part["text"]?.string else {
                    throw .invalid(
                        "\(path).content[\(index)]: only text parts are supported", param: "\(path).content[\(index)]")
                }
                text += piece
            }
            return text
        default:
            throw .invalid("\(path).content must be a string or an array of text parts", param: "\(path).content")
        }
    }

    private static func prompt(_ value: JSONValue?) throws(OpenAIError) -> String {
        switch value {
        case .string(let text)?: return text
        case .array(let list)? where list.count == 1 && list[0].string != nil: return list[0].string ?? ""
        default: throw .invalid("prompt must be a string (or an array of one string)", param: "prompt")
        }
    }

    private static func stops(_ value: JSONValue?) throws(OpenAIError) -> [String] {
        switch value {
        case nil, .null?: return []
        case .string(let text)?: return [text]
        case .array(let list)?:
            guard list.count <= 4, list.allSatisfy({ $0.string != nil }) else {
                throw .invalid("stop must be a string or an array of up to 4 strings", param: "stop")
            }
            return list.compactMap(\.string)
        default: throw .invalid("stop must be a string or an array of up to 4 strings", param: "stop")
        }
    }

    private static func number(_ object: JSONObject, _ name: String, in range: ClosedRange<Double>) throws(OpenAIError)
        -> Double?
    {
        guard let value = object[name], value != .null else { return nil }
        guard let number = value.number, range.contains(number) else {
            throw .invalid(
                "\(name) \(value.compactJSON): use a number from \(range.lowerBound) to \(range.upperBound)",
                param: name)
        }
        return number
    }

    private static func integer(_ object: JSONObject, _ name: String, in range: ClosedRange<Int64>) throws(OpenAIError)
        -> Int64?
    {
        guard let value = object[name], value != .null else { return nil }
        guard let number = value.number, number.rounded() == number, let integer = Int64(exactly: number),
            range.contains(integer)
        else {
            throw .invalid(
                "\(name) \(value.compactJSON): use an integer from \(range.lowerBound) to \(range.upperBound)",
                param: name)
        }
        return integer
    }

    private static func bool(_ object: JSONObject, _ name: String, path: String? = nil) throws(OpenAIError) -> Bool? {
        guard let value = object[name], value != .null else { return nil }
        guard let flag = value.bool else {
            throw .invalid("\(path ?? name) must be true or false", param: path ?? name)
        }
        return flag
    }
}
