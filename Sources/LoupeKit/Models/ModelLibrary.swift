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

    package let root: String
    private let loaded = Mutex<SentenceEmbedder?>(nil)
    private let quantized = Mutex<SentenceEmbedder?>(nil)

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
}
