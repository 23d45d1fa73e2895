import Foundation
import GRDB

/// A model's price in dollars per million tokens.
package struct ModelPrice: Hashable, Sendable, Codable {
    package var model: String
    package var inputPerMTok: Double
    package var outputPerMTok: Double
    /// Cached (read) input tokens; nil: billed as input.
    package var cachedInputPerMTok: Double?
    package var source: String

    package init(
        model: String, inputPerMTok: Double, outputPerMTok: Double, cachedInputPerMTok: Double?, source: String
    ) {
        self.model = model
        self.inputPerMTok = inputPerMTok
        self.outputPerMTok = outputPerMTok
        self.cachedInputPerMTok = cachedInputPerMTok
        self.source = source
    }
}
