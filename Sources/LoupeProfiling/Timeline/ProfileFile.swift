import Foundation
import LoupeBase

/// The profiler files Loupe reads, told apart by their first bytes rather than their names: a
/// Kineto/Chrome trace (JSON, gzip or not) or an Nsight Systems SQLite export
/// (`nsys export --type sqlite`).
package enum ProfileFormat: String, Hashable, Sendable {
    case kineto
    case nsightSystems = "nsys"

    /// The format of the file at `path`.
    package static func of(_ path: String) throws -> ProfileFormat {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FileReadError(path: path, reason: .noSuchFile)
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        return head.starts(with: Array("SQLite format 3".utf8) + [0]) ? .nsightSystems : .kineto
    }
}

/// Reads one profiler file of either format, its events in batches (see `KinetoReader.read`).
package enum ProfileFile {
    package static func read(
        _ path: String, names: inout ProfileNames, progress: (_ fraction: Double) -> Void = { _ in },
        events: ([ProfileEvent]) throws -> Void
    ) throws -> KinetoFileInfo {
        switch try ProfileFormat.of(path) {
        case .kineto: try KinetoReader.read(path, names: &names, progress: progress, events: events)
        case .nsightSystems: try NsysReader.read(path, names: &names, progress: progress, events: events)
        }
    }
}
