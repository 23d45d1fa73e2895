import Foundation
import LoupeBase

/// The hyper-parameters of a LLaMA-family decoder (llama.cpp's `llama` architecture), read from
/// a GGUF file's `llama.*` metadata and checked against its tensors.
///
/// SmolLM2-135M-Instruct: 30 layers of width 576, 9 query heads sharing 3 key/value heads
/// (head size 64), a 1536-wide SwiGLU, RoPE base 100000 over the whole head, RMSNorm ε 1e-5,
/// a vocabulary of 49152 and a context of 8192.
package struct LlamaConfiguration: Hashable, Sendable {
    /// `llama.block_count`.
    package var layers: Int
    /// `llama.embedding_length`: the residual stream's width.
    package var width: Int
    /// `llama.feed_forward_length`: the SwiGLU's hidden width.
    package var feedForwardWidth: Int
    /// `llama.attention.head_count`: query heads.
    package var heads: Int
    /// `llama.attention.head_count_kv`: key/value heads, each read by `heads / keyValueHeads`
    /// query heads (grouped-query attention).
    package var keyValueHeads: Int
    /// `llama.context_length`: the longest sequence the model was trained for.
    package var contextLength: Int
    /// `llama.rope.freq_base`: θ_i = base^(−2i / rotated dimensions).
    package var ropeBase: Float
    /// `llama.rope.dimension_count` (the head size when absent): how many of each head's
    /// dimensions RoPE turns, in adjacent pairs from the first.
    package var ropeDimensions: Int
    /// `llama.attention.layer_norm_rms_epsilon`.
    package var rmsEpsilon: Float
    /// `llama.vocab_size`, or `token_embd`'s rows when the key is absent.
    package var vocabularySize: Int

    /// Each head's width: `width / heads`.
    package var headSize: Int { width / heads }
    /// The key (or value) width of one token in one layer: `keyValueHeads · headSize`.
    package var keyValueWidth: Int { keyValueHeads * headSize }
    /// Query heads per key/value head.
    package var groupSize: Int { heads / keyValueHeads }

    package init(
        layers: Int, width: Int, feedForwardWidth: Int, heads: Int, keyValueHeads: Int, contextLength: Int,
        ropeBase: Float, ropeDimensions: Int, rmsEpsilon: Float, vocabularySize: Int
    ) {
        self.layers = layers
        self.width = width
        self.feedForwardWidth = feedForwardWidth
        self.heads = heads
        self.keyValueHeads = keyValueHeads
        self.contextLength = contextLength
        self.ropeBase = ropeBase
        self.ropeDimensions = ropeDimensions
        self.rmsEpsilon = rmsEpsilon
        self.vocabularySize = vocabularySize
    }

    /// Reads and validates the configuration of `file`, whose `general.architecture` must be
    /// `llama`.
    ///
    /// - Throws: ``ModelError`` naming the file and the key for a missing, mistyped or
    ///   out-of-range value, an architecture other than `llama`, heads that do not divide the
    ///   width or the key/value heads, and (``validateTensors(of:)``) a tensor missing or of
    ///   another shape than the configuration implies.
    package init(file: GGUFFile) throws(ModelError) {
        let architecture = try file.string("general.architecture")
        guard architecture == "llama" else {
            throw ModelError(
                file: file.fileName,
                message: "general.architecture is '\(architecture)'; Loupe runs the 'llama' architecture only")
        }
        func positive(_ key: String, limit: Int = 1 << 20) throws(ModelError) -> Int {
            let value = try file.integer(key)
            guard value > 0, value <= limit else {
                throw ModelError(file: file.fileName, message: "\(key): \(value) is not in 1...\(limit)")
            }
            return value
        }
        func positiveFloat(_ key: String) throws(ModelError) -> Float {
            let value = try file.float(key)
            guard value.isFinite, value > 0 else {
                throw ModelError(file: file.fileName, message: "\(key): \(value) is not a positive number")
            }
            return value
        }
        layers = try positive("llama.block_count", limit: 1024)
        width = try positive("llama.embedding_length", limit: 1 << 16)
        feedForwardWidth = try positive("llama.feed_forward_length", limit: 1 << 18)
        heads = try positive("llama.attention.head_count", limit: 1024)
        keyValueHeads =
            file.metadata["llama.attention.head_count_kv"] == nil
            ? heads : try positive("llama.attention.head_count_kv", limit: 1024)
        contextLength = try positive("llama.context_length", limit: 1 << 24)
        ropeBase = try positiveFloat("llama.rope.freq_base")
        rmsEpsilon = try positiveFloat("llama.attention.layer_norm_rms_epsilon")
        guard width % heads == 0 else {
            throw ModelError(
                file: file.fileName,
                message: "llama.embedding_length \(width) is not a multiple of llama.attention.head_count \(heads)")
        }
        guard heads % keyValueHeads == 0 else {
            throw ModelError(
                file: file.fileName,
                message: "llama.attention.head_count \(heads) is not a multiple of "
                    + "llama.attention.head_count_kv \(keyValueHeads)")
        }
        let headSize = width / heads
        ropeDimensions =
            file.metadata["llama.rope.dimension_count"] == nil
            ? headSize : try positive("llama.rope.dimension_count", limit: headSize)
        guard ropeDimensions % 2 == 0 else {
            throw ModelError(
                file: file.fileName, message: "llama.rope.dimension_count \(ropeDimensions) is odd; RoPE turns pairs")
        }
        let embedding = try file.tensor("token_embd.weight")
        if file.metadata["llama.vocab_size"] != nil {
            vocabularySize = try positive("llama.vocab_size", limit: 1 << 24)
        } else {
            guard embedding.dimensions.count == 2, embedding.dimensions[1] > 0 else {
                throw ModelError(
                    file: file.fileName, tensor: embedding.name,
                    message: "has shape \(embedding.dimensions); expected [\(width), vocabulary]")
            }
            vocabularySize = embedding.dimensions[1]
        }
        try validateTensors(of: file)
    }

    /// The shape (ne0 first, as GGUF lists it) each tensor the model reads must have.
    ///
    /// `output.weight` is absent from files whose head is tied to `token_embd` (SmolLM2's is).
    package func expectedShapes(hasOutput: Bool = false) -> [(name: String, dimensions: [Int])] {
        var shapes: [(String, [Int])] = [
            ("token_embd.weight", [width, vocabularySize]), ("output_norm.weight", [width]),
        ]
        if hasOutput { shapes.append(("output.weight", [width, vocabularySize])) }
        for layer in 0..<layers {
            let prefix = "blk.\(layer)."
            shapes += [
                (prefix + "attn_norm.weight", [width]),
                (prefix + "attn_q.weight", [width, width]),
                (prefix + "attn_k.weight", [width, keyValueWidth]),
                (prefix + "attn_v.weight", [width, keyValueWidth]),
                (prefix + "attn_output.weight", [width, width]),
                (prefix + "ffn_norm.weight", [width]),
                (prefix + "ffn_gate.weight", [width, feedForwardWidth]),
                (prefix + "ffn_up.weight", [width, feedForwardWidth]),
                (prefix + "ffn_down.weight", [feedForwardWidth, width]),
            ]
        }
        return shapes
    }

    /// Checks that every tensor the model reads is present, of the configuration's shape and of a
    /// type Loupe reads.
    ///
    /// - Throws: ``ModelError`` naming the tensor: "is missing", "has shape [576, 190]; the
    ///   configuration needs [576, 192]", or its unsupported type.
    package func validateTensors(of file: GGUFFile) throws(ModelError) {
        let hasOutput = file.tensors.contains { $0.name == "output.weight" }
        for (name, dimensions) in expectedShapes(hasOutput: hasOutput) {
            let tensor = try file.tensor(name)
            // GGUF may store a vector as [n] or a matrix with trailing 1s; compare without them.
            var actual = tensor.dimensions
            while actual.count > dimensions.count, actual.last == 1 { actual.removeLast() }
            guard actual == dimensions else {
                throw ModelError(
                    file: file.fileName, tensor: name,
                    message: "has shape \(tensor.dimensions); the configuration needs \(dimensions) (ne0 first)")
            }
            try file.validateSupported(tensor)
        }
    }
}
