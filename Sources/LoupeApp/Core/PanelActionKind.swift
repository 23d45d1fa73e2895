/// The enum of a panel's own actions. A keymap binds a key to a case and the panel handles it in
/// an exhaustive switch, so a key bound to nothing, or an action no key reaches, is a compile
/// error rather than a silent no-op.
package protocol PanelActionKind: Hashable, Sendable {}
