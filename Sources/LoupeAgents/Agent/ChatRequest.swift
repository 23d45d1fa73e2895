import Foundation
import LoupeBase

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
