import Foundation
import GRDB

/// One logged training step.
package struct SAELogRow: Codable, FetchableRecord, Hashable, Sendable {
    package var step: Int
    package var loss: Double
    package var mse: Double
    package var l0: Double
    package var fvu: Double
    package var dead: Double
    /// Latents firing on more than 10% of the step's tokens.
    package var dense: Double
    package var learningRate: Double

    package init(
        step: Int, loss: Double, mse: Double, l0: Double, fvu: Double, dead: Double, dense: Double,
        learningRate: Double
    ) {
        self.step = step
        self.loss = loss
        self.mse = mse
        self.l0 = l0
        self.fvu = fvu
        self.dead = dead
        self.dense = dense
        self.learningRate = learningRate
    }

    /// Columns are snake_case (`learning_rate`); the JSON exports use the same names.
    package static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
}
