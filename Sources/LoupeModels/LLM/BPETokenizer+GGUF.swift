extension BPETokenizer {
    /// The tokenizer a GGUF file describes: `tokenizer.ggml.tokens`, `.merges`, `.token_type`,
    /// `.pre` and `.eos_token_id` (types and eos are optional, as in llama.cpp).
    ///
    /// - Throws: `ModelError` naming the file and the key when the model is not byte-level BPE
    ///   (`tokenizer.ggml.model` other than `gpt2`), a key is missing or has the wrong type, or
    ///   the vocabulary is inconsistent.
    package init(file: GGUFFile) throws(ModelError) {
        let model = try file.string("tokenizer.ggml.model")
        guard model == "gpt2" else {
            throw ModelError(
                file: file.fileName,
                message: "tokenizer.ggml.model: '\(model)' is not byte-level BPE ('gpt2'), the tokenizer Loupe runs")
        }
        let types =
            file.metadata["tokenizer.ggml.token_type"] == nil ? [] : try file.integers("tokenizer.ggml.token_type")
        let eos =
            file.metadata["tokenizer.ggml.eos_token_id"] == nil
            ? nil : try file.integer("tokenizer.ggml.eos_token_id")
        try self.init(
            tokens: try file.strings("tokenizer.ggml.tokens"), merges: try file.strings("tokenizer.ggml.merges"),
            types: types, pre: try file.string("tokenizer.ggml.pre"), eos: eos, source: file.fileName)
    }
}

extension ChatTemplate {
    /// The template of a GGUF file's `tokenizer.chat_template`.
    ///
    /// - Throws: `ModelError` naming the file when the key is missing or is not a ChatML template Loupe renders.
    package init(file: GGUFFile) throws(ModelError) {
        try self.init(source: try file.string("tokenizer.chat_template"), file: file.fileName)
    }
}
