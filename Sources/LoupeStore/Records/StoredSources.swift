import Foundation

/// A stored trace's metadata and its spans' sources as written (zstd-compressed JSON), for
/// putting the trace together again when more of its spans arrive.
package struct StoredSources: Hashable, Sendable {
    package var metadataJSON: String?
    package var spans: [Data]
}
