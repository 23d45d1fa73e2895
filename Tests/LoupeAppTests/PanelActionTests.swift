import LoupeApp
import LoupeTUI
import Testing

/// Every panel's own actions against its keymap. That each is handled in every view is the
/// compiler's check (each panel switches over its `Action` with no `default:`); these check the
/// other half: that no action is left without a key, and that no key is bound to nothing.
@Suite struct PanelActionTests {
    /// The own actions `panel`'s keymap binds, as the app hands them over.
    private static func bound(in panel: any Panel) -> Set<PanelOwnAction> {
        Set(
            panel.keymap.bindings.compactMap { binding in
                guard case .panel(.specific(let action)) = binding.action else { return nil }
                return action
            })
    }

    @Test(arguments: AppState.standardPanels().map(\.id))
    func everyOwnActionIsBoundToAKey(_ id: PanelID) throws {
        let panel = try #require(AppState.standardPanels().first { $0.id == id })
        let all = type(of: panel).ownActions
        #expect(!all.isEmpty, "\(panel.title) declares no actions")
        #expect(Set(all).count == all.count)
        let bound = Self.bound(in: panel)
        let unbound = all.filter { !bound.contains($0) }
        #expect(unbound.isEmpty, "\(panel.title): \(unbound.count) of its \(all.count) actions have no key")
        // And the other way: a key bound to an action the panel does not declare would reach it
        // and stop the app (`PanelOwnAction.action(as:)`).
        let foreign = bound.subtracting(all)
        #expect(foreign.isEmpty, "\(panel.title) binds \(foreign.count) actions that are not its own")
    }

}
