import LoupeBase
import LoupeModels
import LoupeOpenAI
import LoupeServing
import Testing

/// `/v1/chat/completions` and `/v1/completions` bodies read field by field: every field the
/// endpoint takes lands where generation reads it, and a wrong one is a 400
/// `invalid_request_error` whose `param` names it, as OpenAI's API answers.
@Suite struct OpenAIRequestTests {
    static let user: JSONValue = .array([.object(["role": "user", "content": "Hi"])])

    static func chat(_ fields: JSONObject = [:]) throws(OpenAIError) -> OpenAIRequest {
        var body: JSONObject = ["model": "smollm2", "messages": user]
        for (key, value) in fields { body[key] = value }
        return try OpenAIRequest(.object(body), kind: .chat, defaultSeed: 42)
    }

    static func completion(_ fields: JSONObject = [:]) throws(OpenAIError) -> OpenAIRequest {
        var body: JSONObject = ["model": "smollm2", "prompt": "Once"]
        for (key, value) in fields { body[key] = value }
        return try OpenAIRequest(.object(body), kind: .completion, defaultSeed: 42)
    }

    /// The error `body` gives, checked for OpenAI's shape.
    static func failure(_ read: () throws(OpenAIError) -> OpenAIRequest) -> OpenAIError? {
        do {
            _ = try read()
            return nil
        } catch {
            #expect(error.status == 400 && error.type == "invalid_request_error")
            #expect(error.body["error"]?["message"]?.string == error.message)
            #expect(error.body["error"]?["param"] == error.param.map(JSONValue.string) ?? .null)
            return error
        }
    }

    static let weatherTool: JSONValue = .object([
        "type": "function",
        "function": .object([
            "name": "get_weather", "description": "Today's weather",
            "parameters": .object([
                "type": "object", "properties": .object(["city": .object(["type": "string"])]),
                "required": .array(["city"]),
            ]),
        ]),
    ])

    @Test func defaultsAreOpenAIs() throws {
        let request = try Self.chat()
        #expect(request.model == "smollm2" && request.kind == .chat)
        #expect(request.messages == [.user("Hi")])
        #expect(request.options.maxTokens == 256 && request.options.stops.isEmpty)
        #expect(request.options.sampling.temperature == 1 && request.options.sampling.topP == 1)
        #expect(request.options.sampling.seed == 42 && request.options.sampling.topLogprobs == 0)
        #expect(request.n == 1 && !request.stream && !request.includeUsage && !request.logprobs)
        #expect(request.user == nil && request.grammar == nil && request.toolChoice == nil && request.tools.isEmpty)
    }

    @Test func everySamplingFieldIsRead() throws {
        let request = try Self.chat([
            "temperature": .number(0.5), "top_p": .number(0.9), "seed": .number(-1), "max_tokens": .number(12),
            "n": .number(3), "stop": .array(["\n", "END"]),
            "stream": .bool(true), "stream_options": .object(["include_usage": .bool(true)]), "logprobs": .bool(true),
            "top_logprobs": .number(4),
            "user": "someone",
        ])
        #expect(request.options.sampling.temperature == 0.5 && request.options.sampling.topP == 0.9)
        #expect(request.options.sampling.seed == UInt64(bitPattern: -1))
        #expect(request.options.maxTokens == 12 && request.n == 3 && request.options.stops == ["\n", "END"])
        #expect(request.stream && request.includeUsage && request.logprobs)
        #expect(request.options.sampling.topLogprobs == 4 && request.user == "someone")
        // max_completion_tokens is the newer name and wins over max_tokens; one stop string is a list of one.
        let newer = try Self.chat(["max_completion_tokens": .number(7), "max_tokens": .number(99), "stop": "x"])
        #expect(newer.options.maxTokens == 7 && newer.options.stops == ["x"])
    }

    @Test func messagesOfEveryRoleAndTextParts() throws {
        let messages: JSONValue = .array([
            .object(["role": "developer", "content": "Be brief."]),
            .object([
                "role": "user",
                "content": .array([
                    .object(["type": "text", "text": "Weather "]), .object(["type": "text", "text": "?"]),
                ]),
            ]),
            .object([
                "role": "assistant", "content": .null,
                "tool_calls": .array([
                    .object([
                        "id": "call_1", "type": "function",
                        "function": .object(["name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"]),
                    ])
                ]),
            ]),
            .object(["role": "tool", "tool_call_id": "call_1", "content": "rain"]),
        ])
        let request = try Self.chat(["messages": messages, "tools": .array([Self.weatherTool])])
        #expect(request.toolChoice == .auto && request.tools.map(\.name) == ["get_weather"])
        #expect(request.grammar != nil, "tools constrain the reply")
        #expect(request.messages.map(\.role) == ["system", "user", "assistant", "user"])
        #expect(
            request.messages[0].content.contains("Be brief.") && request.messages[0].content.contains("get_weather"))
        #expect(request.messages[1].content == "Weather ?")
        #expect(request.messages[2].content.contains("<tool_call>") && request.messages[2].content.contains("Oslo"))
        #expect(request.messages[3].content.contains("<tool_response>") && request.messages[3].content.contains("rain"))
    }

    @Test func toolChoiceAndResponseFormat() throws {
        let tools: JSONValue = .array([Self.weatherTool])
        #expect(try Self.chat(["tools": tools, "tool_choice": "required"]).toolChoice == .required)
        let named = try Self.chat([
            "tools": tools, "tool_choice": .object(["type": "function", "function": .object(["name": "get_weather"])]),
        ])
        #expect(named.toolChoice == .named("get_weather"))
        let none = try Self.chat(["tools": tools, "tool_choice": "none"])
        #expect(none.toolChoice == nil && none.tools.isEmpty && none.grammar == nil)
        #expect(try Self.chat(["response_format": .object(["type": "json_object"])]).grammar == .jsonObject)
        #expect(try Self.chat(["response_format": .object(["type": "text"])]).grammar == nil)
        let schema: JSONValue = .object([
            "type": "json_schema",
            "json_schema": .object([
                "name": "answer",
                "schema": .object(["type": "object", "properties": .object(["a": .object(["type": "integer"])])]),
            ]),
        ])
        #expect(try Self.chat(["response_format": schema]).grammar != nil)
    }

    @Test func completionFields() throws {
        let request = try Self.completion(["logprobs": .number(3), "prompt": .array(["Once upon"])])
        #expect(request.kind == .completion && request.prompt == "Once upon" && request.messages.isEmpty)
        #expect(request.logprobs && request.options.sampling.topLogprobs == 3)
        #expect(try Self.completion(["logprobs": .number(0)]).logprobs)
        #expect(try !Self.completion().logprobs)
    }

    /// Field, wrong value, the `param` the error must name.
    static let chatMistakes: [(String, JSONValue, String)] = [
        ("model", .number(3), "model"),
        ("messages", "Hi", "messages"),
        ("messages", .array([]), "messages"),
        ("messages", .array([.object(["role": .number(1), "content": "x"])]), "messages[0].role"),
        ("messages", .array([.object(["role": "robot", "content": "x"])]), "messages[0].role"),
        ("messages", .array([.object(["role": "user", "content": .number(5)])]), "messages[0].content"),
        (
            "messages", .array([.object(["role": "user", "content": .array([.object(["type": "image_url"])])])]),
            "messages[0].content[0]"
        ),
        (
            "messages", .array([.object(["role": "tool", "tool_call_id": "nope", "content": "x"])]),
            "messages[0].tool_call_id"
        ),
        ("messages", .array([.object(["role": "assistant", "tool_calls": "x"])]), "messages[0].tool_calls"),
        ("temperature", "hot", "temperature"),
        ("temperature", .number(2.5), "temperature"),
        ("top_p", .number(0), "top_p"),
        ("top_p", .array([]), "top_p"),
        ("seed", .number(1.5), "seed"),
        ("max_tokens", .number(0), "max_tokens"),
        ("max_tokens", "ten", "max_tokens"),
        ("max_completion_tokens", .number(-3), "max_completion_tokens"),
        ("n", .number(9), "n"),
        ("n", .bool(true), "n"),
        ("stop", .number(3), "stop"),
        ("stop", .array(["a", "b", "c", "d", "e"]), "stop"),
        ("stream", "yes", "stream"),
        ("logprobs", .number(1), "logprobs"),
        ("top_logprobs", .number(21), "top_logprobs"),
        ("top_logprobs", .number(2), "top_logprobs"),  // without logprobs: true
        ("user", .number(7), "user"),
        ("tools", .array([]), "tools"),
        ("tools", .array([.object(["type": "retrieval"])]), "tools[0]"),
        (
            "tools", .array([.object(["type": "function", "function": .object(["name": "no spaces"])])]),
            "tools[0].function.name"
        ),
        (
            "tools", .array([.object(["type": "function", "function": .object(["name": "f", "parameters": "x"])])]),
            "tools[0].function.parameters"
        ),
        ("tool_choice", "auto", "tool_choice"),  // no tools to choose from
        ("response_format", .object(["type": "yaml"]), "response_format.type"),
        (
            "response_format", .object(["type": "json_schema", "json_schema": .object([:])]),
            "response_format.json_schema.schema"
        ),
        ("functions", .array([]), "functions"),
        ("function_call", "auto", "function_call"),
    ]

    @Test func aWrongChatFieldIsA400NamingIt() {
        for (field, value, param) in Self.chatMistakes {
            let error = Self.failure { () throws(OpenAIError) in try Self.chat([field: value]) }
            #expect(error?.param == param, "\(field): \(value.compactJSON)")
        }
        let tools: JSONValue = .array([Self.weatherTool])
        let unknown = Self.failure { () throws(OpenAIError) in
            try Self.chat([
                "tools": tools, "tool_choice": .object(["type": "function", "function": .object(["name": "other"])]),
            ])
        }
        #expect(unknown?.param == "tool_choice.function.name")
        let both = Self.failure { () throws(OpenAIError) in
            try Self.chat(["tools": tools, "response_format": .object(["type": "json_object"])])
        }
        #expect(both?.param == "response_format")
        let options = Self.failure { () throws(OpenAIError) in
            try Self.chat(["stream_options": .object(["include_usage": .bool(true)])])
        }
        #expect(options?.param == "stream_options", "stream_options without stream")
        let usage = Self.failure { () throws(OpenAIError) in
            try Self.chat(["stream": .bool(true), "stream_options": .object(["include_usage": "yes"])])
        }
        #expect(usage?.param == "stream_options.include_usage")
        let notObject = Self.failure { () throws(OpenAIError) in
            try OpenAIRequest(.array([]), kind: .chat, defaultSeed: 0)
        }
        #expect(notObject != nil && notObject?.param == nil)
    }

    @Test func aWrongCompletionFieldIsA400NamingIt() {
        let mistakes: [(String, JSONValue, String)] = [
            ("prompt", .number(5), "prompt"), ("prompt", .array(["a", "b"]), "prompt"),
            ("logprobs", .number(6), "logprobs"),
            ("logprobs", .bool(true), "logprobs"), ("echo", .bool(true), "echo"),
            ("tools", .array([Self.weatherTool]), "tools"),
            ("tool_choice", "auto", "tool_choice"),
        ]
        for (field, value, param) in mistakes {
            let error = Self.failure { () throws(OpenAIError) in try Self.completion([field: value]) }
            #expect(error?.param == param, "\(field): \(value.compactJSON)")
        }
    }
}
