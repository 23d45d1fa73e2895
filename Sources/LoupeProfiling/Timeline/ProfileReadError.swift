import LoupeBase

/// A profiler trace that cannot be read, and where: the file, the event's index in its
/// `traceEvents` when one event is at fault, and the byte offset (inflated) of a syntax error.
package struct ProfileReadError: UserFacingError, Hashable, Sendable {
    package var file: String
    package var event: Int?
    package var byteOffset: Int?
    package var message: String

    package init(file: String, event: Int? = nil, byteOffset: Int? = nil, message: String) {
        self.file = file
        self.event = event
        self.byteOffset = byteOffset
        self.message = message
    }

    /// `file: traceEvents[12] (byte 3456): message`.
    package var description: String {
        var place = file
        if let event { place += ": traceEvents[\(event)]" }
        if let byteOffset { place += " (byte \(byteOffset))" }
        return "\(place): \(message)"
    }
}
