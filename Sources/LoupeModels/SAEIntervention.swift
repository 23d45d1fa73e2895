import Foundation
import LoupeTensor

/// What a sparse autoencoder trained on a language model's residual stream (after `layer`) does
/// to that stream during a forward pass, as a ``LlamaResidualHook``: steer with feature
/// directions, ablate features, splice the SAE's reconstruction in, or zero the stream.
///
/// Units: the SAE reads the stream multiplied by its ``SparseAutoencoder/inputScale`` `s` and
/// writes feature `j`'s contribution as `a_j · d_j` (its activation times its unit decoder row),
/// so in the stream's own units the contribution is `a_j · d_j / s`. Steering by `α` adds
/// `α · d_j / s`: `α` is in the feature's activation units, the numbers its card shows.
package struct SAEIntervention: Sendable {
    package let sae: SparseAutoencoder
    package var layer: Int
    /// The SAE's encoder for ``FloatMatrix``: a row's codes, and so what an ablation or a splice
    /// does to it, do not depend on the rows beside it (a batch of sequences, a prompt read in
    /// chunks) or on the CPU. Through sgemm they did, and q8's 8-bit activations turned the last
    /// bit into another greedy token (docs/decisions/2026-11-29-one-row-one-answer.md).
    private let encoder: FloatMatrix
    /// Positions before this are left as they are by ablation, splicing and zeroing: the first
    /// token's stream is the attention sink, orders of magnitude larger than the rest, and the
    /// SAE never trained on it.
    package var firstPosition = 1

    package init(sae: SparseAutoencoder, layer: Int) {
        self.sae = sae
        self.layer = layer
        encoder = sae.rowInvariantEncoder()
    }

    /// Feature `j`'s decoder direction in the stream's units (`d_j / s`).
    package func direction(_ feature: Int) -> [Float] {
        let inputs = sae.inputs
        let scale = sae.inputScale
        return (0..<inputs).map { sae.decoder[feature * inputs + $0] / scale }
    }

    /// Checks that every feature is one of the SAE's.
    package func check(features: [Int]) throws(ModelError) {
        if let bad = features.first(where: { !(0..<sae.width).contains($0) }) {
            throw ModelError(file: "SAE", message: "feature \(bad): the SAE has features 0…\(sae.width - 1)")
        }
    }

    /// Removes each ablated feature's contribution (`a_j · d_j / s` where the SAE, run on the
    /// stream, gives it an activation `a_j > 0`; rows where it is inactive are left bit for bit),
    /// then adds `α · d_j / s` for each steer at every position.
    package func steering(_ steers: [(feature: Int, alpha: Float)], ablating ablated: [Int]) throws(ModelError)
        -> LlamaResidualHook
    {
        try check(features: steers.map(\.feature) + ablated)
        let inputs = sae.inputs
        var delta = [Float](repeating: 0, count: inputs)
        for (feature, alpha) in steers {
            let d = direction(feature)
            for i in 0..<inputs { delta[i] += alpha * d[i] }
        }
        let directions = Dictionary(uniqueKeysWithValues: Set(ablated).map { ($0, direction($0)) })
        let added = delta
        let this = self
        return LlamaResidualHook(layer: layer) { stream, positions in
            if !directions.isEmpty { this.ablate(directions, in: &stream, positions: positions) }
            if !steers.isEmpty {
                stream.storage.withUnsafeMutableBufferPointer { x in
                    for row in 0..<positions.count {
                        let base = row * inputs
                        for i in 0..<inputs { x[base + i] += added[i] }
                    }
                }
            }
        }
    }

    /// The SAE's codes for the rows of `stream` at ``firstPosition`` or later: (row indices, codes
    /// `[rows, width]`, reconstructions `[rows, inputs]` in the SAE's scaled units).
    package func encode(_ stream: Tensor, positions: [Int]) -> (rows: [Int], forward: SparseAutoencoder.Forward)? {
        let inputs = sae.inputs
        let rows = positions.indices.filter { positions[$0] >= firstPosition }
        guard !rows.isEmpty else { return nil }
        var x = [Float](repeating: 0, count: rows.count * inputs)
        for (index, row) in rows.enumerated() {
            for i in 0..<inputs { x[index * inputs + i] = stream.storage[row * inputs + i] * sae.inputScale }
        }
        return (rows, sae.forward(x, rows: rows.count, rowInvariant: encoder))
    }

    private func ablate(_ directions: [Int: [Float]], in stream: inout Tensor, positions: [Int]) {
        guard case (let rows, let f)? = encode(stream, positions: positions) else { return }
        let inputs = sae.inputs
        for (index, row) in rows.enumerated() {
            for (feature, d) in directions {
                let a = f.codes[index * sae.width + feature]
                guard a > 0 else { continue }
                for i in 0..<inputs { stream.storage[row * inputs + i] -= a * d[i] }
            }
        }
    }

    /// Replaces the stream at ``firstPosition`` and later by the SAE's reconstruction of it.
    package func splicing() -> LlamaResidualHook {
        let this = self
        return LlamaResidualHook(layer: layer) { stream, positions in
            guard case (let rows, let f)? = this.encode(stream, positions: positions) else { return }
            let inputs = this.sae.inputs
            let scale = this.sae.inputScale
            for (index, row) in rows.enumerated() {
                for i in 0..<inputs {
                    stream.storage[row * inputs + i] = f.reconstruction[index * inputs + i] / scale
                }
            }
        }
    }

    /// Sets the stream at ``firstPosition`` and later to zero (the fidelity's floor).
    package func zeroing() -> LlamaResidualHook {
        let first = firstPosition
        return LlamaResidualHook(layer: layer) { stream, positions in
            let width = stream.columns
            for (row, position) in positions.enumerated() where position >= first {
                for i in 0..<width { stream.storage[row * width + i] = 0 }
            }
        }
    }
}
