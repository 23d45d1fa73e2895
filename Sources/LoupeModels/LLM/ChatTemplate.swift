import Foundation
import LoupeBase

/// One turn of a conversation.
package struct ChatMessage: Sendable, Equatable, Codable {
    /// ChatML's role: `system`, `user`, `assistant` (the template takes any string).
    package var role: String
    package var content: String

    package init(role: String, content: String) {
        self.role = role
        self.content = content
    }

    package static func system(_ content: String) -> ChatMessage { ChatMessage(role: "system", content: content) }
    package static func user(_ content: String) -> ChatMessage { ChatMessage(role: "user", content: content) }
    package static func assistant(_ content: String) -> ChatMessage { ChatMessage(role: "assistant", content: content) }
}

/// A model's chat template, rendered in Swift rather than by a Jinja engine: Loupe knows the
/// ChatML templates below and refuses any other, so a model is never prompted in a format it
/// was not trained on.
///
/// ChatML renders each message as `<|im_start|>role\ncontent<|im_end|>\n` and asks for a reply
/// with `<|im_start|>assistant\n`. SmolLM2's template first adds a system turn, "You are a helpful
/// AI assistant named SmolLM, trained by Hugging Face", when the first message is not `system`.
package struct ChatTemplate: Sendable, Equatable {
    /// SmolLM2-Instruct's `tokenizer.chat_template`, verbatim (368 characters).
    package static let smolLM2Source =
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        + "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
        + "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        + "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
        + "{% endif %}"

    /// The plain ChatML template (no default system turn), as Hugging Face documents it.
    package static let chatMLSource =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        + "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
        + "{% endif %}"

    /// The system turn added when the first message is not `system`; nil for plain ChatML.
    package let defaultSystemPrompt: String?

    /// SmolLM2's template.
    package static let smolLM2 = ChatTemplate(defaultSystemPrompt: SmolLM2.systemPrompt)

    private enum SmolLM2 {
        static let systemPrompt = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    }

    private init(defaultSystemPrompt: String?) {
        self.defaultSystemPrompt = defaultSystemPrompt
    }

    /// The template whose Jinja source is `source` (a model's `tokenizer.chat_template`).
    ///
    /// - Throws: `ModelError` naming `file` when the source is not one of the ChatML templates Loupe renders.
    package init(source: String, file: String) throws(ModelError) {
        let normalized = source.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(
            in: .whitespacesAndNewlines)
        switch normalized {
        case Self.smolLM2Source: self.init(defaultSystemPrompt: SmolLM2.systemPrompt)
        case Self.chatMLSource: self.init(defaultSystemPrompt: nil)
        default:
            let start = String(normalized.prefix(60)).debugDescription
            throw ModelError(
                file: file,
                message: "tokenizer.chat_template: not a ChatML template Loupe renders (it begins \(start)); "
                    + "Loupe renders SmolLM2's and plain ChatML, and runs no other Jinja template")
        }
    }

    /// The prompt text: every message as ChatML, then `<|im_start|>assistant\n` when `addGenerationPrompt`.
    /// Encode it with `parseSpecial: true`; `encode(_:with:)` is the safer way to get its ids.
    package func render(_ messages: [ChatMessage], addGenerationPrompt: Bool = true) -> String {
        var text = ""
        for turn in turns(messages) { text += "<|im_start|>" + turn.role + "\n" + turn.content + "<|im_end|>\n" }
        if addGenerationPrompt { text += "<|im_start|>assistant\n" }
        return text
    }

    /// The prompt's token ids, the same as `tokenizer.encode(render(messages), parseSpecial: true)`
    /// except that a role or content spelling a special token (`<|im_end|>`) stays plain text,
    /// so a user cannot end a turn or forge one.
    ///
    /// - Throws: `ModelError` when the tokenizer has no `<|im_start|>` or `<|im_end|>` token.
    package func encode(
        _ messages: [ChatMessage], addGenerationPrompt: Bool = true, with tokenizer: BPETokenizer
    ) throws(ModelError) -> [Int32] {
        guard let start = tokenizer.specialID("<|im_start|>"), let end = tokenizer.specialID("<|im_end|>") else {
            throw ModelError(file: "tokenizer", message: "has no <|im_start|> or <|im_end|> token for ChatML")
        }
        let newline = tokenizer.encode("\n")
        var ids: [Int32] = []
        for turn in turns(messages) {
            ids.append(start)
            ids += tokenizer.encode(turn.role + "\n" + turn.content)
            ids.append(end)
            ids += newline
        }
        if addGenerationPrompt { ids += [start] + tokenizer.encode("assistant\n") }
        return ids
    }

    private func turns(_ messages: [ChatMessage]) -> [ChatMessage] {
        guard let defaultSystemPrompt, messages.first?.role != "system" else { return messages }
        // The Jinja adds the system turn inside the loop's first pass: no messages, no system turn.
        guard !messages.isEmpty else { return [] }
        return [.system(defaultSystemPrompt)] + messages
    }
}
