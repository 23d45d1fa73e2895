import LoupeKit

/// Where a jump from one panel to another goes.
package enum Navigation: Hashable, Sendable {
    case trace(Int64)
    case retrieval(RetrievalRequest)

    package var panel: PanelID {
        switch self {
        case .trace: .traces
        case .retrieval: .retrieval
        }
    }
}
