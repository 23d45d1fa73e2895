import Foundation
import LoupeBase

package struct ChatResponse: Hashable, Sendable {
    /// The assistant's turn: text, reasoning, tool calls.
    package var message: Message
    package var usage: Usage
    /// The model that answered, as the provider named it.
    package var model: String
    package var finishReason: String?
    /// What the provider saw that a hosted model never shows (an in-process model's tokens with
    /// their log-probabilities, its timings), kept on the call's span.
    package var attributes: [String: JSONValue]

    package init(
        message: Message, usage: Usage = Usage(), model: String, finishReason: String? = nil,
        attributes: [String: JSONValue] = [:]
    ) {
        self.message = message
        self.usage = usage
        self.model = model
        self.finishReason = finishReason
        self.attributes = attributes
    }
}
