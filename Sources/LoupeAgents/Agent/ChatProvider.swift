import Foundation
import LoupeBase

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
