import LoupeBase
import LoupeModels

/// A `/v1/chat/completions` or `/v1/completions` request, read and checked field by field; a
/// field that is wrong is an ``OpenAIError`` naming it (`param`), as OpenAI answers.
package struct OpenAIRequest: Sendable {
    package enum Kind: Sendable { case chat, completion }

    package var kind: Kind
    package var model: String
    /// Chat: the conversation. Completions: empty.
    package var messages: [ChatMessage] = []
    /// Completions: the prompt text.
    package var prompt = ""
    package var options = GenerationOptions()
    package var n = 1
    package var stream = false
    package var includeUsage = false
    /// Whether each token's log-probability is returned (chat `logprobs: true`; completions `logprobs: N`).
    package var logprobs = false
    package var user: String?
    /// The grammar `response_format` asks the answer to keep to (`json_object`, `json_schema`).
    package var grammar: Grammar?

    /// The fields tool calling will serve; until then they are refused, not ignored.
    static let unsupported = ["tools", "tool_choice", "functions", "function_call"]

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
                "\(name) is not supported yet: loupe serve does not offer tool calls yet", param: name,
                code: "unsupported_parameter")
        }
        grammar = try Self.responseFormat(object["response_format"])
        switch kind {
        case .chat: messages = try Self.messages(object["messages"])
        case .completion: prompt = try Self.prompt(object["prompt"])
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

    private static func messages(_ value: JSONValue?) throws(OpenAIError) -> [ChatMessage] {
        guard let list = value?.array else {
            throw .invalid("messages must be an array of {role, content}", param: "messages")
        }
        guard !list.isEmpty else { throw .invalid("messages must not be empty", param: "messages") }
        var messages: [ChatMessage] = []
        for (index, message) in list.enumerated() {
            let path = "messages[\(index)]"
            guard let role = message["role"]?.string else {
                throw .invalid("\(path).role must be a string", param: "\(path).role")
            }
            guard ["system", "developer", "user", "assistant"].contains(role) else {
                throw .invalid(
                    "\(path).role '\(UntrustedText.sanitized(role))': use system, developer, user or assistant "
                        + "(tool messages need tool support, not offered yet)", param: "\(path).role")
            }
            messages.append(
                ChatMessage(role: role == "developer" ? "system" : role, content: try content(message, path: path)))
        }
        return messages
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
