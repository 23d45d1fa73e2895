import Foundation
import LoupeModels
import Testing

struct ChatTemplateTests {
    static let question = "What is the capital of France?"

    @Test func smolLM2AddsItsSystemTurnWhenTheFirstMessageIsNotSystem() throws {
        let template = try ChatTemplate(source: ChatTemplate.smolLM2Source, file: "model.gguf")
        #expect(template == .smolLM2)
        #expect(ChatTemplate.smolLM2Source.count == 368)
        let withDefault =
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            + "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"
        #expect(template.render([.user(Self.question)]) == withDefault)
        let withSystem =
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            + "<|im_start|>assistant\nHello!<|im_end|>\n"
        let conversation: [ChatMessage] = [.system("Be brief."), .user("Hi"), .assistant("Hello!")]
        #expect(template.render(conversation, addGenerationPrompt: false) == withSystem)
        #expect(template.render([], addGenerationPrompt: false) == "")
    }

    @Test func plainChatMLAddsNoSystemTurn() throws {
        let template = try ChatTemplate(source: ChatTemplate.chatMLSource + "\n", file: "model.gguf")
        #expect(template.defaultSystemPrompt == nil)
        #expect(template.render([.user("Hi")]) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    }

    @Test func otherTemplatesAreRefused() {
        let llama3 =
            "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
            + "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim %}"
        let error = #expect(throws: ModelError.self) { try ChatTemplate(source: llama3, file: "llama.gguf") }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("llama.gguf: tokenizer.chat_template: not a ChatML template"), "\(text)")
        #expect(text.contains("{% set loop_messages"), "\(text)")
    }

    /// The ids never let a message's text end its turn: `<|im_end|>` typed by a user stays text.
    @Test func encodingKeepsSpecialSpellingsInMessagesAsText() throws {
        let tokenizer = try BPETokenizerTests.tokenizer()
        let messages: [ChatMessage] = [.system("s"), .user("a<|im_end|>b")]
        let ids = try ChatTemplate.smolLM2.encode(messages, with: tokenizer)
        #expect(ids.filter { $0 == 2 }.count == 2)
        #expect(ids.first == 1)
        #expect(tokenizer.decode(ids, renderSpecial: true) == ChatTemplate.smolLM2.render(messages))
        // Without such spellings the ids are those of the rendered prompt.
        let plain: [ChatMessage] = [.user("aaa bc"), .assistant("wo"), .user("x")]
        #expect(
            try ChatTemplate.smolLM2.encode(plain, with: tokenizer)
                == tokenizer.encode(ChatTemplate.smolLM2.render(plain), parseSpecial: true))
    }
}

@Suite(.enabled(if: SmolLM2Fixtures.modelPath != nil, "SmolLM2 GGUF not found: run scripts/fetch-smollm2"))
struct ChatTemplateParityTests {
    /// The research brief's vector, which llama.cpp's `llama_tokenize(parse_special = true)` gives.
    static let capitalOfFrance: [Int32] = [
        1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2,
        198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198,
    ]

    @Test func theModelsTemplateIsTheOneRendered() throws {
        let vocabulary = try SmolLM2Fixtures.vocabulary()
        #expect(vocabulary.chatTemplate == ChatTemplate.smolLM2Source)
        #expect(try ChatTemplate(source: vocabulary.chatTemplate, file: "SmolLM2") == .smolLM2)
    }

    @Test func theCapitalOfFrancePromptGivesTheResearchIds() throws {
        let tokenizer = try SmolLM2Fixtures.tokenizer()
        let messages: [ChatMessage] = [.user(ChatTemplateTests.question)]
        let rendered = ChatTemplate.smolLM2.render(messages)
        #expect(tokenizer.encode(rendered, parseSpecial: true) == Self.capitalOfFrance)
        #expect(try ChatTemplate.smolLM2.encode(messages, with: tokenizer) == Self.capitalOfFrance)
    }
}
