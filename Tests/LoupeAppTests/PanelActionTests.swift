import LoupeApp
import LoupeTUI
import Testing

/// Every panel's own actions against its keymap. That each is handled in every view is the
/// compiler's check (each panel switches over its `Action` with no `default:`); these check the
/// other half: that no action is left without a key, that no key is bound to nothing, and that
/// a key bound to an action reaches the panel as the app looks keys up (`handleNormal`: the
/// panel's keymap first while it takes keys first, then the global keymap, then the panel's).
@Suite struct PanelActionTests {
    /// The own actions a key press reaches `panel` with, as it stands: for each binding, its keys
    /// that no earlier binding of the panel takes and, unless the panel takes keys first, that
    /// the global keymap does not take (`n` and `N` pass through while no search is on).
    static func reachable(in panel: any Panel) -> Set<PanelOwnAction> {
        var reached: Set<PanelOwnAction> = []
        for binding in panel.keymap.bindings {
            guard case .panel(.specific(let action)) = binding.action else { continue }
            let reaches = binding.keys.contains { key in
                guard panel.keymap.action(for: key) == binding.action else { return false }
                if panel.takesKeysFirst { return true }
                let global = Keymaps.global.action(for: key)
                return global == nil || global == .searchNext || global == .searchPrevious
            }
            if reaches { reached.insert(action) }
        }
        return reached
    }

    /// Every own action of a panel as its first view shows it is reached by a key. The Review
    /// panel is the exception checked elsewhere: its item keys (`n`, `q`) take keys before the
    /// global ones only in the item view, which `ReviewPanelTests` opens on a real workspace.
    @Test(arguments: AppState.standardPanels().map(\.id).filter { $0 != .review })
    func everyOwnActionIsReachedByAKey(_ id: PanelID) throws {
        let panel = try #require(AppState.standardPanels().first { $0.id == id })
        let all = type(of: panel).ownActions
        let reached = Self.reachable(in: panel)
        let unreached = all.filter { !reached.contains($0) }
        #expect(unreached.isEmpty, "\(panel.title): \(unreached.count) actions whose every key another takes first")
    }

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
