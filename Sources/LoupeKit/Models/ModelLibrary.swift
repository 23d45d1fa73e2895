import Foundation
import LoupeModels
import Synchronization

/// Where Loupe's models live and the loaded ones, shared by every command of a process.
///
/// all-MiniLM-L6-v2 is looked up in `$LOUPE_MODELS/all-MiniLM-L6-v2`, else
/// `~/.cache/loupe/models/all-MiniLM-L6-v2` (where `scripts/fetch-minilm` puts it). Loading
/// reads 90 MB, so the embedder is loaded once and kept.
package final class ModelLibrary: Sendable {
    package static let miniLMName = "all-MiniLM-L6-v2"
    package static let smolLM2Name = "SmolLM2-135M-Instruct"
    package static let smolLM2File = "SmolLM2-135M-Instruct.Q4_1.gguf"

    package let root: String
    private let loaded = Mutex<SentenceEmbedder?>(nil)
    private let quantized = Mutex<SentenceEmbedder?>(nil)
    private let generators = Mutex<[LlamaPrecision: Generator]>([:])

    package init(root: String) { self.root = root }

    /// The library at `$LOUPE_MODELS` or `~/.cache/loupe/models`.
    package static func standard(environment: [String: String]) -> ModelLibrary {
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? ".") + "/.cache/loupe/models")
        return ModelLibrary(root: root)
    }

    package var miniLMDirectory: String { root + "/" + ModelLibrary.miniLMName }

    /// True when the MiniLM files are present (not checked for integrity).
    package var hasMiniLM: Bool {
        SentenceEmbedder.requiredFiles.allSatisfy { FileManager.default.fileExists(atPath: miniLMDirectory + "/" + $0) }
    }

    /// The MiniLM sentence embedder, loaded on first use.
    package func miniLM() throws(ModelError) -> SentenceEmbedder {
        let directory = miniLMDirectory
        return try loaded.withLock { (slot: inout SentenceEmbedder?) throws(ModelError) -> SentenceEmbedder in
            if let embedder = slot { return embedder }
            guard FileManager.default.fileExists(atPath: directory) else {
                throw ModelError(
                    file: ModelLibrary.miniLMName,
                    message: "not found in \(directory); run scripts/fetch-minilm (or set LOUPE_MODELS)")
            }
            let embedder = try SentenceEmbedder(directory: directory)
            slot = embedder
            return embedder
        }
    }

    /// MiniLM at `precision`: the fp32 embedder, or its int8 form, quantised on first use and kept.
    package func miniLM(precision: Precision) throws(ModelError) -> SentenceEmbedder {
        let base = try miniLM()
        guard precision == .int8 else { return base }
        return quantized.withLock { slot in
            if let embedder = slot { return embedder }
            let embedder = base.quantized()
            slot = embedder
            return embedder
        }
    }

    /// Where `scripts/fetch-smollm2` caches SmolLM2-135M-Instruct's GGUF.
    package var smolLM2Path: String { root + "/" + ModelLibrary.smolLM2Name + "/" + ModelLibrary.smolLM2File }

    /// True when SmolLM2's GGUF is present (not checked for integrity).
    package var hasSmolLM2: Bool { FileManager.default.fileExists(atPath: smolLM2Path) }

    /// SmolLM2-135M-Instruct with its tokenizer, loaded at `precision` on first use and kept:
    /// `q8` keeps the file's quantized weights (what generation uses), `f32` dequantizes them (the
    /// exact path the parity checks use).
    package func smolLM2(precision: LlamaPrecision = .q8) throws(ModelError) -> Generator {
        let path = smolLM2Path
        return try generators.withLock { (slots: inout [LlamaPrecision: Generator]) throws(ModelError) -> Generator in
            if let generator = slots[precision] { return generator }
            guard FileManager.default.fileExists(atPath: path) else {
                throw ModelError(
                    file: ModelLibrary.smolLM2File,
                    message: "not found in \(root)/\(ModelLibrary.smolLM2Name); run loupe models fetch smollm2 "
                        + "(or set LOUPE_MODELS)")
            }
            let file = try GGUFFile(path: path)
            let generator = Generator(
                model: try LlamaModel(file: file, precision: precision), tokenizer: try BPETokenizer(file: file),
                template: try ChatTemplate(file: file))
            slots[precision] = generator
            return generator
        }
    }
}
