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
        // Non-blocking, so that a FIFO with no writer cannot make the open wait.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw FileReadError(path: path, errno: errno) }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 16)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return n == 16 && head.starts(with: Array("SQLite format 3".utf8) + [0]) ? .nsightSystems : .kineto
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
