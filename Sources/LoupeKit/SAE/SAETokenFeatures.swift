import Foundation
import LoupeBase
import LoupeModels
import LoupeStore

/// The SAE features active where a local model chose one of a step's generated tokens: SmolLM2
/// reads the step's context (its recorded prompt and the tokens before that one, as the token's
/// attention and lens do) and the SAE encodes the stream after its layer at the last position,
/// the one whose prediction was the token. What `x` shows in the Traces panel's token view and
/// `loupe sae at` prints.
package struct TokenFeatures: Hashable, Sendable, Codable {
    package struct Feature: Hashable, Sendable, Codable {
        package var feature: Int
        package var activation: Float
        package var label: String?
        /// Its largest activation over the SAE's activation set (its card's max).
        package var maxActivation: Float?
    }

    package var trace: Int64
    package var span: Int
    package var token: Int
    /// The token chosen there, as the step recorded it.
    package var chosen: String
    /// The position read: the last of the context.
    package var position: Int
    package var sae: Int64
    package var layer: Int
    /// Strongest first.
    package var features: [Feature]
    /// Why the features have no ``Feature/maxActivation``: the SAE's feature index (its cards'
    /// maxima) could not be read from the workspace. Nil when they have them.
    package var maximaUnreadable: String?
}

extension SAEBrowser {
    /// ``TokenFeatures`` of token `token` of span `span` of `trace`, with SAE `sae` (nil: the
    /// newest finished SmolLM2 SAE).
    package func tokenFeatures(trace: Int64, span: Int, token: Int, sae saeID: Int64? = nil) throws -> TokenFeatures {
        let (id, layer, sae) = try SAESteering(database: database, models: models).languageModelSAE(saeID)
        let (context, generator) = try TokenInsidesBrowser(tables: TraceTables(database), models: models).context(
            trace: trace, span: span, token: token, precision: .q8)
        let activations = try SAETextActivations(ids: context.ids, sae: sae, layer: layer, generator: generator)
        let labels = try SAETables(database).saeFeatureLabels(model: id)
        // The features are this position's own codes; their maxima come from the stored index, and
        // a damaged index leaves them out with the reason, not silently.
        var summaries: [SAEFeatureIndex.Summary] = []
        var unreadable: String?
        do {
            summaries = try index(id).summaries
        } catch {
            // The workspace's path is on the status bar and in the command line: the cause first,
            // so a narrow terminal still shows it.
            unreadable = (error as? WorkspaceError)?.message ?? "\(error)"
        }
        return TokenFeatures(
            trace: trace, span: span, token: token, chosen: context.chosen.text, position: context.query, sae: id,
            layer: layer,
            features: activations.features[context.query].map {
                TokenFeatures.Feature(
                    feature: $0.feature, activation: $0.activation, label: labels[$0.feature],
                    maxActivation: summaries.indices.contains($0.feature) ? summaries[$0.feature].maxActivation : nil)
            }, maximaUnreadable: unreadable.map { "SAE \(id)'s feature maxima are unreadable: \($0)" })
    }
}
