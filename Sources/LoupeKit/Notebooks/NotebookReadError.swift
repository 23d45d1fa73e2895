import Foundation
import LoupeBase

/// A notebook that could not be read.
package struct NotebookReadError: UserFacingError {
    package var path: String
    package var reason: String

    package var description: String { "\(path): \(reason)" }
}
