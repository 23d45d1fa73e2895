import Foundation
import LoupeBase
import LoupeTensor

/// The arithmetic of a LLaMA model's linear layers.
package enum LlamaPrecision: String, Sendable, CaseIterable, Codable {
    /// Every weight dequantized to float32 when the model loads, every product in float32
    /// (``FloatMatrix``): the exact path, within float rounding of the numpy reference.
    case f32
    /// Q4_1 and Q8_0 weights kept as the file stores them (``QuantizedMatrix``), activations
    /// quantized to 8 bits per block of 32 as each product runs, as llama.cpp's CPU backend does;
    /// norms, RoPE, attention and SwiGLU stay float32. A quarter of the float path's memory.
    case q8
}

/// A LLaMA-family decoder (llama.cpp's `llama` architecture: RMSNorm, grouped-query attention
/// with NORM RoPE, SwiGLU, no biases) with its weights from a GGUF file.
///
/// For each token: `h = x + Wo·attention(RoPE(Wq·n), RoPE(Wk·n), Wv·n)` with `n = RMSNorm(x)·g₁`,
/// then `x' = h + Wdown·(silu(Wgate·m) ⊙ Wup·m)` with `m = RMSNorm(h)·g₂`; the logits are
/// `E·(RMSNorm(x)·g)`, with `E` = `output.weight`, or `token_embd` when the file ties the head to
/// the embedding. RoPE turns each head's adjacent pairs (2i, 2i+1), as GGUF's permuted Q and K
/// rows need (research brief local-llm.md §3).
///
/// Thread-safety: immutable; any number of threads may run it at once, each with its own
/// ``LlamaKVCache``s.
package struct LlamaModel: Sendable {
    package let configuration: LlamaConfiguration
    package let precision: LlamaPrecision
    /// The model file's last path component, for errors.
    package let fileName: String
    /// The file, kept open for the token embedding's rows, dequantized as tokens arrive (the
    /// same floats `GGUFFile.floats` gives the float path's weights).
    let file: GGUFFile

    /// The bytes of every tensor in the file, as stored: what one decode step reads of the weights.
    package var tensorBytes: Int { file.tensors.reduce(0) { $0 + $1.byteCount } }
    let embeddingTensor: GGUFTensorInfo
    /// The head's repacked copy of `token_embd` when the head is tied to it (q8): the token
    /// embedding's rows come from it, the same bits as the file's, so no page of the file is
    /// read after loading. Reading rows from the file faulted in 64 KB around each one (the
    /// kernel's fault-around): 21 MB of the 30 MB tensor resident after 640 random tokens.
    let embeddingCopy: QuantizedMatrix?
    /// Threads the products and the attention split their work over.
    package var threads: Int = ProcessInfo.processInfo.activeProcessorCount
    /// An edit of the residual stream after one layer in every forward pass (steering, SAE
    /// splicing, capture); nil for the plain model. Set through ``hooked(_:)``.
    package internal(set) var residualHook: LlamaResidualHook?
    /// The language-model head `[vocabulary, width]`: the embedding itself when tied.
    let head: LlamaLinear
    /// The final RMSNorm's weight `[width]`.
    let outputNorm: [Float]
    let layers: [Layer]

    /// One decoder block's weights.
    struct Layer: Sendable {
        var attentionNorm: [Float]
        /// Q, K and V stacked: `[width + 2 · keyValueWidth, width]`, so the three are one product
        /// (and their outputs are column blocks of one row).
        var queryKeyValue: LlamaLinear
        var attentionOutput: LlamaLinear
        var feedForwardNorm: [Float]
        /// Gate and up stacked: `[2 · feedForwardWidth, width]`.
        var gateUp: LlamaLinear
        var down: LlamaLinear
    }

    /// Opens `path` and loads the model from it.
    package init(path: String, precision: LlamaPrecision = .f32) throws(ModelError) {
        try self.init(file: try GGUFFile(path: path), precision: precision)
    }

    /// Loads and shape-checks every tensor the model needs from `file`.
    ///
    /// - Throws: ``ModelError`` naming the file and, where one is at fault, the tensor (see
    ///   ``LlamaConfiguration/init(file:)``).
    package init(file: GGUFFile, precision: LlamaPrecision = .f32) throws(ModelError) {
        let configuration = try LlamaConfiguration(file: file)
        self.configuration = configuration
        self.precision = precision
        fileName = file.fileName
        self.file = file
        // Each tensor's file pages are released as soon as it is copied (the file and the copies
        // resident together were the load's peak RSS: 97 MB more than the copies).
        func floats(_ name: String) throws(ModelError) -> [Float] {
            let tensor = try file.tensor(name)
            defer { file.releaseResidentPages(of: tensor) }
            return try file.floats(tensor)
        }
        func stacked(_ names: [String], columns: Int) throws(ModelError) -> LlamaLinear {
            if precision == .q8 {
                var parts: [QuantizedMatrix] = []
                for name in names {
                    let tensor = try file.tensor(name)
                    parts.append(try QuantizedMatrix(tensor: tensor, file: file))
                    file.releaseResidentPages(of: tensor)
                }
                return .quantized(parts)
            }
            var storage: [Float] = []
            for name in names { storage += try floats(name) }
            return .float(FloatMatrix(rows: storage.count / columns, columns: columns, weights: storage))
        }
        let width = configuration.width
        embeddingTensor = try file.tensor("token_embd.weight")
        let headName = file.tensors.contains { $0.name == "output.weight" } ? "output.weight" : "token_embd.weight"
        head = try stacked([headName], columns: width)
        if headName == "token_embd.weight", case .quantized(let parts) = head, parts.count == 1 {
            embeddingCopy = parts[0]
        } else {
            embeddingCopy = nil
        }
        outputNorm = try floats("output_norm.weight")
        var layers: [Layer] = []
        for index in 0..<configuration.layers {
            let prefix = "blk.\(index)."
            layers.append(
                Layer(
                    attentionNorm: try floats(prefix + "attn_norm.weight"),
                    queryKeyValue: try stacked(
                        [prefix + "attn_q.weight", prefix + "attn_k.weight", prefix + "attn_v.weight"], columns: width),
                    attentionOutput: try stacked([prefix + "attn_output.weight"], columns: width),
                    feedForwardNorm: try floats(prefix + "ffn_norm.weight"),
                    gateUp: try stacked([prefix + "ffn_gate.weight", prefix + "ffn_up.weight"], columns: width),
                    down: try stacked([prefix + "ffn_down.weight"], columns: configuration.feedForwardWidth)))
        }
        self.layers = layers
        // Every tensor but the embedding's rows (read per token) is now copied: the file's
        // pages would otherwise stay resident beside the copies, the weights counted twice in RSS.
        file.releaseResidentPages()
    }

    /// A key/value cache for one sequence of up to `context` tokens (the file's context length
    /// when nil).
    ///
    /// - Throws: ``ModelError`` when `context` is not in 1...``LlamaConfiguration/contextLength``.
    package func makeCache(context: Int? = nil) throws(ModelError) -> LlamaKVCache {
        let context = context ?? configuration.contextLength
        guard context >= 1, context <= configuration.contextLength else {
            throw ModelError(
                file: fileName,
                message: "a context of \(context) tokens was asked for; the model takes 1 to "
                    + "\(configuration.contextLength)")
        }
        return LlamaKVCache(
            layers: configuration.layers, keyValueWidth: configuration.keyValueWidth, capacity: context)
    }
}

/// A linear layer's weight `[outputs, inputs]` (each row one output's weights, as GGUF stores
/// it), in the form the model's precision keeps it.
enum LlamaLinear: Sendable {
    /// `[outputs, inputs]` float32, repacked for the float products.
    case float(FloatMatrix)
    /// Quantized matrices stacked along the outputs (Q, K and V; gate and up), which read one
    /// quantization of their shared input.
    case quantized([QuantizedMatrix])

    var outputs: Int {
        switch self {
        case .float(let matrix): matrix.rows
        case .quantized(let parts): parts.reduce(0) { $0 + $1.rows }
        }
    }

    /// `x · Wᵀ` for `x` of shape `[rows, inputs]`: the float products, or the integer products of
    /// activations quantized once, the parts' outputs side by side in each row. Either way each
    /// row's outputs have the bits that row alone would get.
    func apply(_ x: Tensor, threads: Int) -> Tensor {
        let rows = x.rows
        var y = Tensor(zeros: [rows, outputs])
        guard rows > 0 else { return y }
        switch self {
        case .float(let matrix):
            x.storage.withUnsafeBufferPointer { input in
                y.storage.withUnsafeMutableBufferPointer {
                    matrix.multiply(rows: rows, input.baseAddress!, into: $0.baseAddress!, threads: threads)
                }
            }
        case .quantized(let parts):
            let activations = x.storage.withUnsafeBufferPointer {
                QuantizedActivations(rows: rows, columns: x.columns, $0.baseAddress!)
            }
            y.storage.withUnsafeMutableBufferPointer {
                QuantizedMatrix.multiply(parts, activations, into: $0.baseAddress!, threads: threads)
            }
        }
        return y
    }
}
