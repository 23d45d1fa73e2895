import Foundation
import LoupeBase

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
