/// The enum of a panel's own actions. A keymap binds a key to a case; the panel's
/// `perform(_:area:)` hands ``PanelAction/specific(_:)`` to a `switch` over its `Action` with no
/// `default:`, so a new action the panel does not handle in every view is a compile error.
/// That every action is also bound to a key is checked by `PanelActionTests`, which walks
/// `Action.allCases` (``Panel/Action``).
package protocol PanelActionKind: Hashable, Sendable {}
