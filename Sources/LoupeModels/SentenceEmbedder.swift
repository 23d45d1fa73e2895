import Foundation
import LoupeTensor
import Synchronization

/// sentence-transformers' all-MiniLM-L6-v2: WordPiece tokens → BERT encoder → mean over the
/// real tokens → L2 normalisation.
package struct SentenceEmbedder: Sendable {
    package let tokenizer: WordPieceTokenizer
    package private(set) var encoder: BertEncoder
    package let directory: String

    /// The files a model directory must hold.
    package static let requiredFiles = ["config.json", "vocab.txt", "model.safetensors"]

    /// Loads `config.json`, `vocab.txt` and `model.safetensors` from `directory`.
    package init(directory: String, maxTokens: Int = 256) throws(ModelError) {
        self.directory = directory
        for file in SentenceEmbedder.requiredFiles where !FileManager.default.fileExists(atPath: directory + "/" + file)
        {
            throw ModelError(file: file, message: "is missing from \(directory); run scripts/fetch-minilm")
        }
        let configuration = try BertConfiguration(file: directory + "/config.json")
        tokenizer = try WordPieceTokenizer(vocabularyFile: directory + "/vocab.txt", maxTokens: maxTokens)
        guard tokenizer.vocabulary.count == configuration.vocabularySize else {
            throw ModelError(
                file: "vocab.txt",
                message: "has \(tokenizer.vocabulary.count) tokens, config.json says \(configuration.vocabularySize)")
        }
        encoder = try BertEncoder(
            weights: try SafeTensors(path: directory + "/model.safetensors"), configuration: configuration)
    }

    /// The same embedder with the encoder's linear layers in int8 (see `BertEncoder.quantized`).
    package func quantized() -> SentenceEmbedder {
        var copy = self
        copy.encoder = encoder.quantized()
        return copy
    }

    /// One text's result: token ids and the unit-length embedding.
    package struct Embedding: Hashable, Sendable {
        package var ids: [Int32]
        package var vector: [Float]
    }

    /// Embeds `texts` in batches of `batchSize`.
    ///
    /// Texts are sorted by token count before batching, as sentence-transformers does, so a
    /// batch pads little; results come back in the input order. With more than one batch and
    /// `parallelBatches` > 1, batches run concurrently, one per core, each with single-threaded
    /// BLAS: per-core batches beat splitting every small attention product across threads.
    ///
    /// - Parameter profile: when given, collects each operation's time, FLOPs and bytes.
    package func embed(
        _ texts: [String], batchSize: Int = 32, parallelBatches: Int = ProcessInfo.processInfo.activeProcessorCount,
        profile: OperationProfile? = nil
    ) -> [Embedding] {
        let encoded = texts.map(tokenizer.encode)
        let order = encoded.indices.sorted { encoded[$0].count < encoded[$1].count }
        let batches = stride(from: 0, to: order.count, by: max(1, batchSize)).map {
            Array(order[$0..<min(order.count, $0 + batchSize)])
        }
        let results = Mutex([Embedding?](repeating: nil, count: texts.count))
        let run = { @Sendable (batch: [Int]) in
            // The batch goes through the encoder a few sequences at a time (see `passes`), so every
            // layer's activations stay in cache from one operation to the next.
            for pass in SentenceEmbedder.passes(batch.map { encoded[$0].count }) {
                let ids = pass.map { encoded[batch[$0]] }
                let (hidden, _) = encoder.forward(ids, profile: profile)
                let vectors = SentenceEmbedder.meanPool(hidden, lengths: ids.map(\.count))
                results.withLock { slots in
                    for (position, vector) in zip(pass, vectors) {
                        slots[batch[position]] = Embedding(ids: encoded[batch[position]], vector: vector)
                    }
                }
            }
        }
        if batches.count > 1, parallelBatches > 1 {
            let threads = BLAS.threads
            BLAS.threads = 1
            DispatchQueue.concurrentPerform(iterations: batches.count) { run(batches[$0]) }
            BLAS.threads = threads
        } else {
            for batch in batches { run(batch) }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// Rows (tokens, padding included) one encoder pass takes at most, unless one sequence is longer.
    package static let rowsPerPass = 256

    /// Splits a batch (sequences of `lengths`, in order) into runs of consecutive sequences whose
    /// padded size, count × longest, stays within `rowsPerPass`: 8 sentences of 30 tokens or one
    /// passage of 256. A pass of 256 rows keeps the layer's widest activation (256 × 1536 floats,
    /// 1.5 MB) in L2/L3 and its GEMMs still run at the roof; measured on the 128 passages of 256
    /// tokens, whole batches of 32 (8,192 rows) lost a fifth of the linear layers' speed to memory
    /// traffic. Each sequence's result does not depend on the others in its pass.
    package static func passes(_ lengths: [Int]) -> [Range<Int>] {
        var passes: [Range<Int>] = []
        var start = 0
        var longest = 0
        for (index, length) in lengths.enumerated() {
            let wider = max(longest, length)
            if index > start, wider * (index - start + 1) > rowsPerPass {
                passes.append(start..<index)
                start = index
                longest = length
            } else {
                longest = wider
            }
        }
        if start < lengths.count { passes.append(start..<lengths.count) }
        return passes
    }

    /// Mean of each sequence's real rows of `[B, T, H]`, L2-normalised.
    package static func meanPool(_ hidden: Tensor, lengths: [Int]) -> [[Float]] {
        let width = hidden.shape[1]
        let size = hidden.shape[2]
        return lengths.enumerated().map { b, length in
            var sum = [Float](repeating: 0, count: size)
            for t in 0..<length {
                let base = (b * width + t) * size
                for d in 0..<size { sum[d] += hidden.storage[base + d] }
            }
            let mean = sum.map { $0 / Float(max(1, length)) }
            let norm = mean.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return norm > 0 ? mean.map { $0 / norm } : mean
        }
    }

    /// Cosine similarity of two vectors (their dot product when both are unit length).
    package static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        var dot: Float = 0
        var na: Float = 0
        var nb: Float = 0
        for (x, y) in zip(a, b) {
            dot += x * y
            na += x * x
            nb += y * y
        }
        return dot / max(1e-12, (na * nb).squareRoot())
    }
}
