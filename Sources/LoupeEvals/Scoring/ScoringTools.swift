import Foundation
import LoupeAgents
import LoupeBase

/// What answer scorers may need from outside this module: MiniLM embeddings and a judge model.
package struct ScoringTools: Sendable {
    /// Sentence embeddings (L2-normalised) for texts.
    package var embed: (@Sendable ([String]) throws -> [[Float]])?
    /// The chat provider a judge spec names.
    package var provider: (@Sendable (ProviderSpec) throws -> any ChatProvider)?

    package init(
        embed: (@Sendable ([String]) throws -> [[Float]])? = nil,
        provider: (@Sendable (ProviderSpec) throws -> any ChatProvider)? = nil
    ) {
        self.embed = embed
        self.provider = provider
    }
}
