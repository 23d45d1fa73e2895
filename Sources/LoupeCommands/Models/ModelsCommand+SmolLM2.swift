import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore

/// `loupe models info smollm2` and SmolLM2's registration: what the GGUF file says about itself.
///
/// Names, the chat template and every other string come from the file and are made terminal-safe
/// (`UntrustedText.sanitized`) before they are printed.
extension ModelsCommand {
    /// The file's header, read without loading the weights; the error says how to fetch it.
    static func openSmolLM2(context: CommandContext) throws -> GGUFFile {
        let models = context.session.models
        guard models.hasSmolLM2 else {
            throw CommandFailure(
                "\(ModelLibrary.smolLM2Name) not found at \(models.smolLM2Path): run loupe models fetch smollm2 "
                    + "(or set LOUPE_MODELS)")
        }
        return try GGUFFile(path: models.smolLM2Path)
    }

    /// Records SmolLM2 in the workspace with the sha256 `fetch-smollm2` checked the file against.
    @discardableResult
    static func registerSmolLM2(context: CommandContext, file: GGUFFile? = nil) throws -> ModelRecord {
        let file = try file ?? openSmolLM2(context: context)
        let summary = SmolLM2Summary(file)
        let record = ModelRecord(
            name: ModelLibrary.smolLM2Name, directory: (file.path as NSString).deletingLastPathComponent,
            weightsSHA256: checkedSHA256(of: ModelLibrary.smolLM2File), parameters: summary.parameters,
            description: "SmolLM2-135M-Instruct, Q4_1 GGUF: \(summary.architectureLine)")
        try context.settings().register(record)
        return record
    }

    /// `models info smollm2`.
    static func showSmolLM2(context: CommandContext) throws {
        let file = try openSmolLM2(context: context)
        let record = try registerSmolLM2(context: context, file: file)
        let summary = SmolLM2Summary(file)
        context.print("model         \(ModelLibrary.smolLM2Name) (\(summary.name))")
        context.print("file          \(file.path)")
        context.print(
            "format        GGUF v\(file.version), alignment \(file.alignment), \(file.keys.count) metadata keys")
        context.print("architecture  \(summary.architectureLine)")
        context.print("attention     \(summary.attentionLine)")
        context.print("context       \(summary.contextLine)")
        context.print("vocabulary    \(summary.vocabularyLine)")
        context.print("chat template \(summary.templateLine)")
        context.print("tensors       \(summary.tensorLine)")
        context.print(
            "bytes         \(summary.tensorBytes) of tensor data (\(Formatting.bytes(Int64(summary.tensorBytes)))), "
                + "file \(file.fileSize) (\(Formatting.bytes(Int64(file.fileSize))))")
        context.print("parameters    \(record.parameters)")
        context.print("weights       sha256 \(record.weightsSHA256)")
    }
}

/// The lines `models info smollm2` prints, from the GGUF's metadata; a missing key shows as `?`.
struct SmolLM2Summary {
    let name: String
    let architectureLine: String
    let attentionLine: String
    let contextLine: String
    let vocabularyLine: String
    let templateLine: String
    let tensorLine: String
    let tensorBytes: Int
    let parameters: Int

    init(_ file: GGUFFile) {
        func text(_ key: String) -> String { (try? file.string(key)).map { UntrustedText.sanitized($0) } ?? "?" }
        let architecture = text("general.architecture")
        func number(_ key: String) -> String {
            let full = architecture + "." + key
            if let integer = try? file.integer(full) { return String(integer) }
            if let float = try? file.float(full) { return String(format: "%g", Double(float)) }
            return "?"
        }
        name = text("general.name")
        architectureLine =
            "\(architecture), \(number("block_count")) layers, width \(number("embedding_length")), "
            + "FFN \(number("feed_forward_length"))"
        let heads = (try? file.integer(architecture + ".attention.head_count")) ?? 0
        let width = (try? file.integer(architecture + ".embedding_length")) ?? 0
        let headSize = heads > 0 && width % heads == 0 ? String(width / heads) : "?"
        attentionLine =
            "\(number("attention.head_count")) query heads, \(number("attention.head_count_kv")) key/value heads, "
            + "head size \(headSize)"
        contextLine =
            "\(number("context_length")) tokens, RoPE base \(number("rope.freq_base")) over "
            + "\(number("rope.dimension_count")) dims, RMS-norm ε \(number("attention.layer_norm_rms_epsilon"))"
        let tokens = (try? file.strings("tokenizer.ggml.tokens").count).map(String.init) ?? "?"
        let merges = (try? file.strings("tokenizer.ggml.merges").count).map(String.init) ?? "?"
        let bos = (try? file.integer("tokenizer.ggml.bos_token_id")).map(String.init) ?? "?"
        let eos = (try? file.integer("tokenizer.ggml.eos_token_id")).map(String.init) ?? "?"
        vocabularyLine =
            "\(tokens) tokens (\(text("tokenizer.ggml.model")) BPE, pre-tokenizer \(text("tokenizer.ggml.pre"))), "
            + "\(merges) merges, BOS \(bos), EOS \(eos)"
        if let template = try? file.string("tokenizer.chat_template") {
            let lines = template.split(separator: "\n", omittingEmptySubsequences: false)
            let first = UntrustedText.sanitized(String((lines.first ?? "").prefix(100)))
            templateLine = "\(first)… (\(template.count) characters, \(lines.count) lines)"
        } else {
            templateLine = "none"
        }
        var counts: [String: Int] = [:]
        for tensor in file.tensors { counts[tensor.type.name, default: 0] += 1 }
        let byType = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value) \($0.key)" }
        tensorLine = "\(file.tensors.count): " + byType.joined(separator: ", ")
        tensorBytes = file.tensors.reduce(0) { $0 + $1.byteCount }
        parameters = file.tensors.reduce(0) { $0 + $1.elementCount }
    }
}
