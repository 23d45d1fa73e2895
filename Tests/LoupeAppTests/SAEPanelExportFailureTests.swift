import Foundation
import LoupeApp
import LoupeKit
import LoupeTUI
import LoupeTestSupport
import Testing

/// The SAE panel's `e` on a card that JSON cannot hold (a maximum activation that is NaN, as a
/// diverged SAE leaves): nothing is written, and the status line says the card was not exported.
@Suite struct SAEPanelExportFailureTests {
    @Test func aCardThatDoesNotEncodeIsNotExportedAndSaysWhy() throws {
        var state = try SAEPanelTests().loaded()
        AppFixtures.press([.character("/")], on: &state)
        AppFixtures.type("feature 3027", on: &state)
        AppFixtures.press([.enter], on: &state)
        let opened = AppFixtures.press([.enter], on: &state)
        #expect(opened.first == .ask(SAEPanel.LoadCard(model: 1, feature: 3027)))
        var card = try SAEPanelTests.fixture("card", as: SAEFeatureIndex.Card.self)
        card.maxActivation = .nan
        _ = state.update(AppFixtures.answer(SAEPanel.LoadCard(model: 1, feature: 3027), card))

        let exported = AppFixtures.press([.character("e")], on: &state)
        #expect(!exported.contains { if case .writeFile = $0 { true } else { false } }, "\(exported)")
        #expect(state.render().text().contains("✗ feature 3027 was not exported: "))
    }
}
