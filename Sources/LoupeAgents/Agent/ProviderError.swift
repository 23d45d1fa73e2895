import Foundation
import LoupeBase

/// Why a model call failed, and whether trying again may help (rate limits, server errors,
/// dropped connections) or not (a bad key, a bad request).
package struct ProviderError: UserFacingError, Hashable, Sendable {
    package var message: String
    package var retryable: Bool
    package var status: Int?

    package init(_ message: String, retryable: Bool, status: Int? = nil) {
        self.message = message
        self.retryable = retryable
        self.status = status
    }

    package var description: String { (status.map { "HTTP \($0): " } ?? "") + message }
}
