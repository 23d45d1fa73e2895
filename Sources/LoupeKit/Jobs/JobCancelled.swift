import Foundation
import LoupeBase
import Synchronization

/// Thrown by work that noticed its job was cancelled.
package struct JobCancelled: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    package init() {}
    package var description: String { "cancelled" }
}
