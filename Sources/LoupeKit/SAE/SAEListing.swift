import Foundation
import LoupeModels
import LoupeStore
import Synchronization

/// One stored SAE as the feature browser lists it: what it was trained as, how far it got, its
/// metrics and its training curve.
package struct SAEListing: Codable, Hashable, Sendable {
    package var id: Int64
    package var activationSet: Int64
    package var layer: Int
    package var width: Int
    package var k: Int?
    package var l1: Float
    package var step: Int
    package var steps: Int
    /// Rows of its activation set.
    package var tokens: Int
    package var metrics: SAEMetrics?
    package var log: [SAELogRow]
    /// The model whose residual stream it reads (its activation set's): MiniLM or SmolLM2.
    package var source: String?

    /// "TopK k 32" or "ReLU L1 5".
    package var kind: String { k.map { "TopK k \($0)" } ?? "ReLU L1 \(String(format: "%g", l1))" }
    package var finished: Bool { step >= steps }
}
