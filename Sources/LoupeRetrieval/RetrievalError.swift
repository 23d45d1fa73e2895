import LoupeBase

/// Bad retrieval input, with where it is.
package struct RetrievalError: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
