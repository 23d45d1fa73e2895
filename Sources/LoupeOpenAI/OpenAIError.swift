import LoupeBase

/// An error as OpenAI's API shapes it: an HTTP status and `{"error": {"message", "type", "param",
/// "code"}}`, which the official clients turn into their typed exceptions.
package struct OpenAIError: Error, Sendable, Equatable {
    package var status: Int
    package var type: String
    package var message: String
    /// The request field at fault (`messages[2].content`), when there is one.
    package var param: String?
    package var code: String?

    package init(status: Int, type: String, message: String, param: String? = nil, code: String? = nil) {
        self.status = status
        self.type = type
        self.message = message
        self.param = param
        self.code = code
    }

    /// 400: a field missing, of the wrong type or out of range.
    package static func invalid(_ message: String, param: String?, code: String? = nil) -> OpenAIError {
        OpenAIError(status: 400, type: "invalid_request_error", message: message, param: param, code: code)
    }

    /// The body OpenAI sends with it.
    package var body: JSONValue {
        .object([
            "error": .object(
                JSONObject([
                    ("message", .string(message)), ("type", .string(type)),
                    ("param", param.map(JSONValue.string) ?? .null), ("code", code.map(JSONValue.string) ?? .null),
                ]))
        ])
    }
}
