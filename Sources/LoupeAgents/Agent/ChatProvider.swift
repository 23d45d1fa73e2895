import Foundation
import LoupeBase

/// A tool as a model sees it: a name, what it does, and its arguments' JSON schema.
package struct ToolSpec: Hashable, Sendable {
    package var name: String
    package var description: String
    package var parameters: JSONValue

    package init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }

    /// The chat-completions `tools[]` entry.
    var openAI: JSONValue {
        .object([
            "type": "function",
            "function": .object([
                "name": .string(name), "description": .string(description), "parameters": parameters,
            ]),
        ])
    }
}

package struct ChatRequest: Hashable, Sendable {
    package var messages: [Message]
    package var tools: [ToolSpec]
    package var maxTokens: Int?

    package init(messages: [Message], tools: [ToolSpec], maxTokens: Int? = nil) {
        self.messages = messages
        self.tools = tools
        self.maxTokens = maxTokens
    }
}

package struct ChatResponse: Hashable, Sendable {
    /// The assistant's turn: text, reasoning, tool calls.
    package var message: Message
    package var usage: Usage
    /// The model that answered, as the provider named it.
    package var model: String
    package var finishReason: String?

    package init(message: Message, usage: Usage = Usage(), model: String, finishReason: String? = nil) {
        self.message = message
        self.usage = usage
        self.model = model
        self.finishReason = finishReason
    }
}

/// Why a model call failed, and whether trying again may help (rate limits, server errors,
/// dropped connections) or not (a bad key, a bad request).
package struct ProviderError: UserFacingError, Hashable, Sendable {
    package var message: String
    package var retryable: Bool
    package var status: Int?

    package init(_ message: String, retryable: Bool, status: Int? = nil) {
        self.message = message
        self.retryable = retryable
        self.status = status
    }

    package var description: String { (status.map { "HTTP \($0): " } ?? "") + message }
}

/// Something that answers a conversation: a chat-completions server or the offline policy.
package protocol ChatProvider: Sendable {
    /// How traces label the provider: "offline", "openai-compatible".
    var label: String { get }
    /// The model asked for.
    var model: String { get }
    /// One model call; `onText` gets the answer's text as it streams in.
    func complete(_ request: ChatRequest, onText: @escaping @Sendable (String) -> Void) throws(ProviderError)
        -> ChatResponse
}
