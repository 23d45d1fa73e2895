import Foundation
import LoupeTensor
import Synchronization

/// An edit of the residual stream after one layer, run inside every forward pass of a model that
/// carries it (``LlamaModel/hooked(_:)``): steering with a direction, ablating an SAE feature,
/// splicing in an SAE's reconstruction, or reading the stream (activation capture).
///
/// A model without a hook runs exactly as before: one nil check per layer, no copy, so a plain
/// generation pays nothing for the ability to steer.
package struct LlamaResidualHook: Sendable {
    /// The layer whose output the hook edits (0-based): the stream entering layer `layer + 1`.
    package var layer: Int
    /// Called once per forward pass with that layer's output `[rows, width]` (every new token of
    /// every sequence of the batch, packed in order; editable in place) and each row's position in
    /// its own sequence.
    package var edit: @Sendable (_ stream: inout Tensor, _ positions: [Int]) -> Void

    package init(layer: Int, edit: @escaping @Sendable (_ stream: inout Tensor, _ positions: [Int]) -> Void) {
        self.layer = layer
        self.edit = edit
    }
}

extension LlamaModel {
    /// This model with `hook` run in every forward pass (a prefill, each decode step, teacher
    /// forcing), or without any when nil. The weights are shared with `self`, not copied.
    ///
    /// - Throws: ``ModelError`` when the hook's layer is not one of the model's.
    package func hooked(_ hook: LlamaResidualHook?) throws(ModelError) -> LlamaModel {
        if let hook, !(0..<configuration.layers).contains(hook.layer) {
            throw ModelError(
                file: fileName,
                message: "layer \(hook.layer) is out of range: the model has layers 0…\(configuration.layers - 1)")
        }
        var copy = self
        copy.residualHook = hook
        return copy
    }

    /// Runs the hook on `x`, the output of layer `index`, when it is the hook's layer.
    @inline(__always)
    func runHook(after index: Int, on x: inout Tensor, positions: [Int]) {
        if let hook = residualHook, hook.layer == index { hook.edit(&x, positions) }
    }
}

/// Keeps the residual stream a pass saw after one layer (activation capture), leaving it as it is.
package final class LlamaResidualCapture: Sendable {
    private let stream = Mutex<Tensor?>(nil)

    package init() {}

    /// The stream of the last pass that ran ``hook(layer:)``: `[rows, width]`, every sequence's new
    /// rows packed in order.
    package var value: Tensor? { stream.withLock { $0 } }

    /// A hook after `layer` that keeps a copy of the stream.
    package func hook(layer: Int) -> LlamaResidualHook {
        LlamaResidualHook(layer: layer) { [self] x, _ in stream.withLock { $0 = x } }
    }
}
