import Foundation
import LoupeBase
import LoupeTensor

/// What one layer's residual stream would predict at one position, read through the final
/// RMSNorm and the head (the logit lens: nostalgebraist 2020; TransformerLens's
/// `accumulated_resid` with `apply_ln`).
package struct LensCell: Sendable, Codable, Equatable {
    /// 0 for the token embeddings, l + 1 for the stream leaving layer l (the last row is the
    /// model's own prediction).
    package var layer: Int
    package var position: Int
    /// The most likely next tokens, with log-probabilities.
    package var top: [TokenLogprob]
    /// The log-probability of the text's actual next token, nil at the last position.
    package var next: TokenLogprob?
}

/// Direct logit attribution: how much each part of the residual stream adds to one token's logit
/// at one position. The final stream is the sum of the embedding, every layer's attention output
/// (itself the sum of its heads': the projection has no bias) and every feed-forward output; the
/// final RMSNorm is linear once its scale `1/rms` is fixed at the actual final stream's, so the
/// parts' attributions `(u ⊙ g) · part / rms` add up to the logit exactly (up to float rounding).
/// `u` is the token's unembedding row, minus the `versus` token's when one is given (a logit
/// difference), and `g` the final norm's weight.
package struct LogitAttribution: Sendable, Codable, Equatable {
    package var token: Int32
    package var versus: Int32?
    package var position: Int
    /// The model's own logit (or logit difference) for `token` at `position`.
    package var logit: Float
    /// `1 / rms` of the final residual stream at `position`.
    package var scale: Float
    package var embedding: Float
    /// Per layer.
    package var attention: [Float]
    package var feedForward: [Float]
    /// `[layer][head]`; each layer's heads add up to its `attention`.
    package var heads: [[Float]]

    /// The parts' total: equal to ``logit`` up to rounding.
    package var total: Float { embedding + attention.reduce(0, +) + feedForward.reduce(0, +) }
}

extension LlamaModel {
    /// The final RMSNorm and the head applied to each row of `residuals` (`[rows · width]`):
    /// `[rows, vocabulary]` logits.
    package func lensLogits(_ residuals: [Float]) -> Tensor {
        let width = configuration.width
        let stream = Tensor(shape: [residuals.count / width, width], storage: residuals)
        let normalized = Self.rmsNorm(stream, weight: outputNorm, epsilon: configuration.rmsEpsilon)
        return head.apply(normalized, threads: threads)
    }

    /// The logit lens of `probe` (which kept its residuals at the positions asked for): for each
    /// of its positions, every layer's top `top` tokens and the log-probability of the text's next
    /// token. Cells are ordered position by position, layers within.
    package func logitLens(of probe: LlamaProbe, top: Int) -> [LensCell] {
        let width = configuration.width
        var cells: [LensCell] = []
        for (index, position) in probe.positions.enumerated() {
            // One position at a time: its (layers + 1) rows are one product, and the logits never
            // exceed [31, vocabulary] however many positions were asked for.
            var rows: [Float] = []
            rows.reserveCapacity(probe.residuals.count * width)
            for stream in probe.residuals { rows += stream[(index * width)..<((index + 1) * width)] }
            let logits = lensLogits(rows)
            let next = position + 1 < probe.tokens.count ? probe.tokens[position + 1] : nil
            for layer in 0..<probe.residuals.count {
                let row = logits.row(layer)
                let summary = row.withUnsafeBufferPointer { Sampler.logSoftmaxSummary($0, top: top) }
                cells.append(
                    LensCell(
                        layer: layer, position: position, top: summary.top,
                        next: next.map {
                            TokenLogprob(id: $0, logprob: row[row.startIndex + Int($0)] - summary.logSumExp)
                        }
                    ))
            }
        }
        return cells
    }

    /// The logit lens of `ids` at `positions` (every position when nil).
    package func logitLens(_ ids: [Int32], positions: [Int]? = nil, top: Int) throws(ModelError) -> [LensCell] {
        logitLens(of: try probe(ids, LlamaProbeRequest(positions: positions ?? Array(ids.indices))), top: top)
    }

    /// Attributes `token`'s logit at `position` (minus `versus`'s, when given) to the embedding,
    /// each layer's attention and feed-forward outputs, and each head.
    ///
    /// - Throws: ``ModelError`` for a token outside the vocabulary or a position outside `ids`.
    package func attribute(
        _ ids: [Int32], token: Int32, versus: Int32? = nil, position: Int
    ) throws(ModelError) -> LogitAttribution {
        let vocabulary = configuration.vocabularySize
        for id in [token] + (versus.map { [$0] } ?? []) where !(0..<vocabulary).contains(Int(id)) {
            throw ModelError(file: fileName, message: "token id \(id) is outside the vocabulary (0..<\(vocabulary))")
        }
        let probe = try probe(ids, LlamaProbeRequest(positions: [position], headOutputs: true))
        let width = configuration.width
        var direction = try unembedding(of: token)
        if let versus {
            let other = try unembedding(of: versus)
            for j in 0..<width { direction[j] -= other[j] }
        }
        let final = probe.residuals[configuration.layers]
        var squares: Double = 0
        for value in final { squares += Double(value) * Double(value) }
        let scale = Float(1 / (squares / Double(width) + Double(configuration.rmsEpsilon)).squareRoot())
        for j in 0..<width { direction[j] *= outputNorm[j] * scale }
        func project(_ part: ArraySlice<Float>) -> Float {
            var sum: Double = 0
            for (j, value) in part.enumerated() { sum += Double(direction[j]) * Double(value) }
            return Float(sum)
        }
        let logits = lensLogits(final)
        let logit = logits.storage[Int(token)] - (versus.map { logits.storage[Int($0)] } ?? 0)
        let heads = configuration.heads
        return LogitAttribution(
            token: token, versus: versus, position: position, logit: logit, scale: scale,
            embedding: project(probe.residuals[0][...]),
            attention: probe.attentionOutputs.map { project($0[...]) },
            feedForward: probe.feedForwardOutputs.map { project($0[...]) },
            heads: probe.headOutputs.map { outputs in
                (0..<heads).map { project(outputs[($0 * width)..<(($0 + 1) * width)]) }
            })
    }

    /// The head's row for `token` (`[width]`): the weights whose dot product with the normed
    /// final stream is the token's logit.
    package func unembedding(of token: Int32) throws(ModelError) -> [Float] {
        let width = configuration.width
        if case .float(let matrix) = head { return matrix.row(Int(token)) }
        let name = file.tensors.contains { $0.name == "output.weight" } ? "output.weight" : "token_embd.weight"
        let tensor = try file.tensor(name)
        var row = [Float](repeating: 0, count: width)
        row.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: Int(token), into: $0.baseAddress!) }
        return row
    }
}
