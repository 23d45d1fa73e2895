import LoupeBase
import LoupeKit
import LoupeTUI

/// A tab of the TUI. Panels render their state and emit effects; they never compute or do
/// I/O themselves (LoupeKit does the work, through commands and effects).
package protocol Panel: Sendable {
    /// The panel's own actions, bound in ``keymap`` with `.panel(.own(Action.x))` and handled by
    /// an exhaustive switch in ``perform(_:area:)``; `allCases` lets a test check each is bound.
    associatedtype Action: PanelActionKind & CaseIterable

    var id: PanelID { get }
    var title: String { get }
    /// The panel's own keys (help, footer); navigation keys are shared.
    var keymap: Keymap { get }
    /// True when `/` has a list to search.
    var isSearchable: Bool { get }
    /// What `/` understands, shown beside the empty search line (a filter language's terms).
    var searchHint: String? { get }
    /// True while a nested view is open that `esc` should close.
    var canGoBack: Bool { get }
    /// Effects to run when the app starts (loading what the panel shows).
    var initialEffects: [PanelEffect] { get }
    /// Effects to run each time the panel's tab is chosen (loading what is costly only when wanted).
    mutating func shown() -> [PanelEffect]
    /// True while the panel edits text (an input box): every key but ctrl+c goes to
    /// ``handleText(_:)`` instead of the keymaps.
    var capturesText: Bool { get }
    /// True while the panel's keymap comes before the global one: a key it binds is its own even
    /// where a global key would take it (the Review item view labels with digits and `q` goes back).
    var takesKeysFirst: Bool { get }
    /// True while the panel animates and needs `.tick` messages without input.
    var wantsTicks: Bool { get }
    /// True until the panel has what it first shows (its list): panel keys wait until then.
    var isLoadingFirstView: Bool { get }
    /// What `y` copies: the selection as plain text (nil when nothing is selected).
    var selectionText: String? { get }

    /// Does what a key bound to `action` does. Shared navigation and ``PanelAction/open`` are
    /// cases of `action`; the panel's own actions arrive as ``PanelAction/specific(_:)`` and are
    /// read with ``PanelOwnAction/action(as:)``.
    mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect]
    mutating func goBack()
    /// Moves the selection to the next match of `query`; false when nothing matches.
    mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool
    /// `/` was confirmed with enter: a panel may look deeper than its list (a trace's content).
    mutating func searchSubmitted(_ query: String) -> [PanelEffect]
    /// Effects a call that cannot return them queued (a search that moved to a step to load).
    mutating func takeEffects() -> [PanelEffect]
    mutating func click(at point: Point, area: Rect) -> [PanelEffect]
    mutating func receive(_ msg: Msg) -> [PanelEffect]
    mutating func commandFinished(tag: Int, outcome: CommandOutcome)
    mutating func handleText(_ key: Key) -> [PanelEffect]
    func render(into frame: inout Frame, area: Rect, context: PanelRenderContext)
}

// MARK: - Default implementations

extension Panel {
    /// Every own action of the panel, type-erased as its keymap binds them.
    package static var ownActions: [PanelOwnAction] { Action.allCases.map(PanelOwnAction.init) }

    package var keymap: Keymap { Keymap(title, []) }
    package var isSearchable: Bool { false }
    package var searchHint: String? { nil }
    package var canGoBack: Bool { false }
    package var initialEffects: [PanelEffect] { [] }
    package mutating func shown() -> [PanelEffect] { [] }
    package var capturesText: Bool { false }
    package var takesKeysFirst: Bool { false }
    package var wantsTicks: Bool { false }
    package var isLoadingFirstView: Bool { false }
    package var selectionText: String? { nil }
    package mutating func handleText(_ key: Key) -> [PanelEffect] { [] }
    package mutating func goBack() {}
    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool { false }
    package mutating func searchSubmitted(_ query: String) -> [PanelEffect] { [] }
    package mutating func takeEffects() -> [PanelEffect] { [] }
    package mutating func click(at point: Point, area: Rect) -> [PanelEffect] { [] }
    package mutating func receive(_ msg: Msg) -> [PanelEffect] { [] }
    package mutating func commandFinished(tag: Int, outcome: CommandOutcome) {}
}

/// The index of the next of `count` items from `start` that `matches`, wrapping around, going
/// `forward` or back: what a search, `e` (next error) and `t` (next tool) move to.
func nextIndex(
    count: Int, from start: Int, forward: Bool = true, includeCurrent: Bool = false, where matches: (Int) -> Bool
) -> Int? {
    guard count > 0 else { return nil }
    for step in (includeCurrent ? 0 : 1)...count {
        let index = ((start + (forward ? step : -step)) % count + count) % count
        if matches(index) { return index }
    }
    return nil
}

/// The index of the next text containing `query` (case-insensitive) from `start`, wrapping
/// around: what `/`, `n` and `N` move a panel's selection to.
func nextMatch(in texts: [String], from start: Int, query: String, forward: Bool, includeCurrent: Bool) -> Int? {
    guard !query.isEmpty else { return nil }
    return nextIndex(count: texts.count, from: start, forward: forward, includeCurrent: includeCurrent) {
        TextSearch.containsIgnoringCase(texts[$0], query)
    }
}

extension ListState {
    /// Moves the selection to the next of `texts` that contains `query` (``nextMatch``); false,
    /// and the selection kept, when none does.
    mutating func selectNextMatch(in texts: [String], query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        guard
            let index = nextMatch(
                in: texts, from: selected, query: query, forward: forward, includeCurrent: includeCurrent)
        else { return false }
        selected = index
        return true
    }
}
