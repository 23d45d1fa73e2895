import Foundation
import LoupeBase

/// A model file that cannot be used, naming the file and, where it applies, the tensor.
package struct ModelError: UserFacingError, Hashable, Sendable {
    /// The model file (or what stands for it, like "SAE checkpoint"); model files have no lines.
    package var location: SourceLocation
    package var tensor: String?
    package var message: String

    package init(at location: SourceLocation, tensor: String? = nil, message: String) {
        self.location = location
        self.tensor = tensor
        self.message = message
    }

    package init(file: String, tensor: String? = nil, message: String) {
        self.init(at: SourceLocation(file: file), tensor: tensor, message: message)
    }

    /// Why a model file could not be read, named by its last path component as model errors are.
    package init(reading error: FileReadError) {
        self.init(file: (error.path as NSString).lastPathComponent, message: error.reasonDescription)
    }

    /// `file: tensor 'name': message`, or `file: message` when no one tensor is at fault.
    package var description: String { "\(location): " + (tensor.map { "tensor '\($0)': " } ?? "") + message }
}
