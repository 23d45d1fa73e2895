import LoupeBase

/// An eval request that cannot be done (no such run, runs that cannot be compared), said so the
/// user knows what to do.
package struct EvalError: UserFacingError, Hashable, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
