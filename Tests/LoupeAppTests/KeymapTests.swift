import LoupeApp
import LoupeTUI
import Testing

@Suite struct KeymapTests {
    @Test func noKeyIsBoundTwiceInTheSameKeymap() {
        for keymap in AppFixtures.state().keymaps where !["Command line", "Palette"].contains(keymap.name) {
            var seen = Set<String>()
            for binding in keymap.bindings {
                for key in binding.keys {
                    #expect(seen.insert(key.displayName).inserted, "\(keymap.name): \(key.displayName) bound twice")
                }
            }
        }
    }

    @Test func everyBindingHasHelpText() {
        for keymap in AppFixtures.state().keymaps {
            for binding in keymap.bindings { #expect(!binding.help.isEmpty) }
        }
    }
}
