import Foundation
import LoupeBase
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor
import Synchronization

/// An SAE request that cannot be done (nothing collected, no such model or feature), said so the
/// user knows what to do.
package struct SAEError: UserFacingError, Hashable, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
