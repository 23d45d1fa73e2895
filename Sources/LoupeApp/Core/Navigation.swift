import LoupeKit

/// Where a jump from one panel to another goes.
package enum Navigation: Hashable, Sendable {
    case trace(Int64)
    case retrieval(RetrievalRequest)
    /// A trace step's MiniLM forward pass, its operations alone on the roofline.
    case roofline(RooflineFocus)

    package var panel: PanelID {
        switch self {
        case .trace: .traces
        case .retrieval: .retrieval
        case .roofline: .roofline
        }
    }
}
