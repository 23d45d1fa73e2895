import LoupeKit
import LoupeTUI

/// What a panel needs to draw itself.
package struct PanelRenderContext: Sendable {
    package var theme: Theme
    package var focused: Bool
    package var zoomed: Bool
    package var searchQuery: String
}
