import LoupeTUI

/// One key binding: the keys, what they do, and how help and the footer describe them.
package struct KeyBinding: Hashable, Sendable {
    package var keys: [Key]
    package var action: AppAction
    /// A sentence for the `?` overlay.
    package var help: String
    /// A word or two for the footer; nil keeps the binding out of the footer.
    package var footer: String?

    package init(_ keys: [Key], _ action: AppAction, help: String, footer: String? = nil) {
        self.keys = keys
        self.action = action
        self.help = help
        self.footer = footer
    }

    /// Keys as people read them: `j ↓`.
    package var keyNames: String { keys.map(\.displayName).joined(separator: " ") }
}
