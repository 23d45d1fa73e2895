/// What a key does inside a panel: shared navigation, or one of the panel's own actions.
package enum PanelAction: Hashable, Sendable {
    case up
    case down
    case left
    case right
    case pageUp
    case pageDown
    case top
    case bottom
    case open
    /// One of the focused panel's own actions (its `Action` enum); made with ``own(_:)``.
    case specific(PanelOwnAction)

    /// A panel's own action, bound in its keymap: `.panel(.own(Action.rerank))`.
    package static func own<Action: PanelActionKind>(_ action: Action) -> PanelAction {
        .specific(PanelOwnAction(action))
    }

    /// The panel's own action, when this is one of `Action`'s; nil for shared navigation and
    /// for another panel's actions.
    package func own<Action: PanelActionKind>(_ type: Action.Type) -> Action? {
        if case .specific(let action) = self { return action.matching(type) }
        return nil
    }
}
