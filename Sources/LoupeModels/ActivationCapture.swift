import LoupeTensor

/// Which activations a forward pass should keep. Nothing is kept unless asked for, so a plain
/// embedding run stores no attention matrices.
package struct CaptureRequest: Hashable, Sendable {
    /// Layers whose attention probabilities to keep (all heads).
    package var attentionLayers: Set<Int>
    /// Layers after which to keep the residual stream (the layer's output hidden states).
    package var residualLayers: Set<Int>
    /// Layers whose query and key projections to keep (BertViz's neuron view: q, k and q·k).
    package var queryKeyLayers: Set<Int>

    package init(attentionLayers: Set<Int> = [], residualLayers: Set<Int> = [], queryKeyLayers: Set<Int> = []) {
        self.attentionLayers = attentionLayers
        self.residualLayers = residualLayers
        self.queryKeyLayers = queryKeyLayers
    }

    package static let none = CaptureRequest()
}

/// What a forward pass kept, per sequence of the batch.
package struct CapturedActivations: Sendable {
    /// `attention[layer][sequence]`: `[heads, T, T]` for that sequence's own length T.
    package var attention: [Int: [Tensor]] = [:]
    /// `residual[layer][sequence]`: `[T, hidden]`.
    package var residual: [Int: [Tensor]] = [:]
    /// `queries[layer][sequence]` and `keys[layer][sequence]`: `[T, hidden]`, before the
    /// 1/√d scale; head h is columns `h·headSize ..< (h+1)·headSize`.
    package var queries: [Int: [Tensor]] = [:]
    package var keys: [Int: [Tensor]] = [:]
}
