import LoupeTUI

/// A named group of bindings: one section of the help overlay and of `docs/keybindings.md`.
package struct Keymap: Hashable, Sendable {
    package var name: String
    package var bindings: [KeyBinding]

    package init(_ name: String, _ bindings: [KeyBinding]) {
        self.name = name
        self.bindings = bindings
    }

    /// The action bound to `key`, if any.
    package func action(for key: Key) -> AppAction? {
        bindings.first { $0.keys.contains(key) }?.action
    }
}
