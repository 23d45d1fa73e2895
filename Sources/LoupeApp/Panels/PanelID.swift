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

extension PanelID {
    /// The tab's name where the tab bar has no room for full titles (80 columns): the usual
    /// abbreviation, or the title itself when it is already short.
    package var shortTitle: String {
        switch self {
        case .traces: return "Traces"
        case .retrieval: return "Retr"
        case .attention: return "Attn"
        case .roofline: return "Roof"
        case .evals: return "Evals"
        case .notebooks: return "Notebooks"
        case .sae: return "SAE"
        case .review: return "Review"
        case .profiles: return "Prof"
        }
    }
}
