import Foundation
import LoupeBase

package struct Message: Hashable, Sendable {
    package var role: String
    package var text: String
    package var reasoning: String?
    package var toolCalls: [ToolCall] = []
    /// For a tool result: the call it answers.
    package var toolCallID: String?
    package var name: String?

    package init(role: String, text: String, toolCalls: [ToolCall] = [], toolCallID: String? = nil) {
        self.role = role
        self.text = text
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
    }
}
