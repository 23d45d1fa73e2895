import LoupeKit
import LoupeTUI

/// The panels of the tab bar, in order.
package enum PanelID: String, CaseIterable, Hashable, Sendable {
    case traces
    case retrieval
    case attention
    case roofline
    case evals
    case notebooks
    case sae
    case review
    case profiles
}
