import Foundation
import LoupeBase

package enum SpanStatus: Hashable, Sendable {
    case unset
    case ok
    case error(String)

    package var isError: Bool {
        if case .error = self { return true }
        return false
    }

    package var code: String {
        switch self {
        case .unset: "unset"
        case .ok: "ok"
        case .error: "error"
        }
    }

    package var message: String? {
        if case .error(let message) = self { return message }
        return nil
    }
}
