import Foundation
import LoupeModels
import LoupeStore
import Synchronization

/// A point of an SAE's training curve as a job's progress carries it to the TUI, which plots the
/// curve while the SAE trains.
package struct SAETrainingPoint: Hashable, Sendable {
    package var model: Int64
    package var log: SAELogRow

    package init(model: Int64, log: SAELogRow) {
        self.model = model
        self.log = log
    }

    private static let keys = ["sae_model", "step", "loss", "mse", "l0", "fvu", "dead", "dense", "learning_rate"]

    /// The point as ``JobProgress/values``.
    package var values: [String: Double] {
        let figures = [
            Double(model), Double(log.step), log.loss, log.mse, log.l0, log.fvu, log.dead, log.dense, log.learningRate,
        ]
        return Dictionary(uniqueKeysWithValues: zip(Self.keys, figures))
    }

    /// The point a progress report carries; nil for any other job's progress.
    package init?(values: [String: Double]) {
        let figures = Self.keys.compactMap { values[$0] }
        guard figures.count == Self.keys.count else { return nil }
        model = Int64(figures[0])
        log = SAELogRow(
            step: Int(figures[1]), loss: figures[2], mse: figures[3], l0: figures[4], fvu: figures[5],
            dead: figures[6], dense: figures[7], learningRate: figures[8])
    }
}
