import Foundation
import LoupeBase
import Synchronization

/// Identifies a running job within one process.
package struct JobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: Int

    package init(_ rawValue: Int) { self.rawValue = rawValue }

    package static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "#\(rawValue)" }
}
