import Foundation
import LoupeBase

package struct ChatRequest: Hashable, Sendable {
    package var messages: [Message]
    package var tools: [ToolSpec]
    package var maxTokens: Int?
    /// The most seconds the whole call may take (what is left of the agent's time limit), so a
    /// server that trickles bytes cannot hold the agent past it; nil: the provider's own timeout.
    package var secondsLeft: Double?

    package init(messages: [Message], tools: [ToolSpec], maxTokens: Int? = nil, secondsLeft: Double? = nil) {
        self.messages = messages
        self.tools = tools
        self.maxTokens = maxTokens
        self.secondsLeft = secondsLeft
    }
}
