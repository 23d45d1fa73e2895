import Foundation
import GRDB

/// A span's stored content: the payload JSON, and its source either as JSON or zstd-compressed.
package struct StoredPayload: Hashable, Sendable {
    package var payload: String
    package var rawJSON: String?
    package var rawZstd: Data?
}
