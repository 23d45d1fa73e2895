import LoupeBase

/// A review request that cannot be done (no such queue, a value the rubric does not allow, an
/// annotator name missing), said so the user knows what to do.
package struct ReviewError: UserFacingError, Hashable, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
