import Foundation
import LoupeApp
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The SAE panel on an SAE of SmolLM2's residual stream: the fixtures are `loupe sae list|features|
/// feature|activate --json` output for a TopK SAE (k 16, 512 latents) trained on 2,048 Cranfield
/// tokens after SmolLM2's layer 15 (`sae collect --model smollm2`; the features file keeps the 40
/// strongest and feature 0, the log every third logged step). Feature 0 fires on the noun before
/// an "of" (theory of, modes of, method of) and its direction promotes " of".
@Suite struct SAEPanelSmolLM2Tests {
    static func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sae-smollm2/\(name).json")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(T.self, from: try Data(contentsOf: url))
    }

    /// The app on the SAE tab with feature 0's card open and the test text run.
    func cardOpen(width: Int = 120, height: Int = 36) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("7")], on: &state)
        let listing = try Self.fixture("listing", as: SAEListing.self)
        #expect(listing.source == ModelLibrary.smolLM2Name)
        let listed = state.update(AppFixtures.answer(SAEPanel.ListSAEs(), [listing]))
        guard case .portJob(let job, _) = try #require(listed.first) else {
            Issue.record("the features are not read as a job: \(listed)")
            return state
        }
        let features = try Self.fixture("features", as: [SAEFeatureIndex.Summary].self)
        _ = state.update(.readFinished(job, PortAnswer(SAEPanel.LoadFeatures(model: 1), .loaded(features))))
        AppFixtures.press([.character("/")], on: &state)
        AppFixtures.type("feature 0 ", on: &state)
        AppFixtures.press([.enter], on: &state)
        let opened = AppFixtures.press([.enter], on: &state)
        #expect(opened.first?.request(as: SAEPanel.LoadCard.self) == SAEPanel.LoadCard(model: 1, feature: 0))
        _ = state.update(
            AppFixtures.answer(
                SAEPanel.LoadCard(model: 1, feature: 0), try Self.fixture("card", as: SAEFeatureIndex.Card.self)))
        let defaultText = "The most important effect of the boundary layer is on drag."
        _ = state.update(
            AppFixtures.answer(
                SAEPanel.Activate(model: 1, text: defaultText),
                try Self.fixture("activate", as: SAETextActivations.self)))
        return state
    }

    @Test func theCardShowsWhatTheDirectionPromotesAndItsContextsAsText() throws {
        let state = try cardOpen()
        expectPanel(state, matchesGolden: "sae-card-smollm2-120x36")
        let screen = state.render().text()
        #expect(screen.contains("SAE · SmolLM2 features") && screen.contains("SAE 1 · SmolLM2 layer 15"))
        #expect(screen.contains("recovered") && screen.contains("promotes · logit"))
        // Byte-level pieces keep their own spaces: a context reads as the text it came from.
        #expect(screen.contains("into the structure, modes of failure under combined load"))
        #expect(screen.contains("s steer "))
    }

    @Test func theNarrowCardSummarisesThePromotedTokens() throws {
        let state = try cardOpen(width: 80, height: 24)
        expectPanel(state, matchesGolden: "sae-card-smollm2-80x24")
        #expect(state.render().text().contains("promotes (s steers)"))
        // The metrics line keeps the loss recovered whole at 80 columns, dropping cosine and dense.
        #expect(state.render().text().contains("· recovered 85.7%"))
    }

    /// `s` on the card opens the : line with `sae steer` for the feature, α four times its largest
    /// activation; the prompt is typed after it.
    @Test func sOnTheCardSteersTheNextGeneration() throws {
        var state = try cardOpen()
        let card = try Self.fixture("card", as: SAEFeatureIndex.Card.self)
        AppFixtures.press([.character("s")], on: &state)
        #expect(state.mode == .commandLine)
        #expect(
            state.commandLine.text == "sae steer 1 0 --alpha \(String(format: "%.1f", 4 * card.maxActivation)) ")
    }
}
