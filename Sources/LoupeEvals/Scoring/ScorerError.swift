import Foundation
import LoupeAgents
import LoupeBase

/// A scorer failed to run (not: the answer was wrong). The result keeps the error.
package struct ScorerError: UserFacingError, Hashable, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
