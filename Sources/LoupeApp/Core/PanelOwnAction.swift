/// A panel's own action with its enum's type erased, so that one ``PanelAction`` case carries
/// every panel's.
package struct PanelOwnAction: Hashable, Sendable {
    private let action: AnySendableHashable

    package init<Action: PanelActionKind>(_ action: Action) { self.action = AnySendableHashable(action) }

    /// The action, when it is one of `Action`'s.
    package func matching<Action: PanelActionKind>(_ type: Action.Type) -> Action? { action.base as? Action }

    /// The action as one of `Action`'s, the enum of the panel it reached. The app hands a panel
    /// only what its own keymap binds (the palette runs app actions only), so another panel's
    /// action here is a bug in the app, not something a user can cause.
    package func action<Action: PanelActionKind>(as type: Action.Type) -> Action {
        guard let action = matching(type) else {
            preconditionFailure("\(self.action.base) reached a panel whose actions are \(Action.self)")
        }
        return action
    }
}
