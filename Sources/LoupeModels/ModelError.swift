import LoupeBase

/// A model file that cannot be used, naming the file and, where it applies, the tensor.
package struct ModelError: UserFacingError, Hashable, Sendable, CustomStringConvertible {
    package var file: String
    package var tensor: String?
    package var message: String

    package init(file: String, tensor: String? = nil, message: String) {
        self.file = file
        self.tensor = tensor
        self.message = message
    }

    package var description: String {
        tensor.map { "\(file): tensor '\($0)': \(message)" } ?? "\(file): \(message)"
    }
}
