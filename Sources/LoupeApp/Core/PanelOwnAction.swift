/// A panel's own action with its enum's type erased, so that one ``PanelAction`` case carries
/// every panel's.
package struct PanelOwnAction: Hashable, Sendable {
    private let action: AnySendableHashable

    package init<Action: PanelActionKind>(_ action: Action) { self.action = AnySendableHashable(action) }

    /// The action, when it is one of `Action`'s.
    package func matching<Action: PanelActionKind>(_ type: Action.Type) -> Action? { action.base as? Action }
}
