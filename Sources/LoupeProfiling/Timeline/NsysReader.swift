import Foundation
import GRDB
import LoupeBase

/// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into the events the
/// Kineto reader gives, so the same analyses run on it: CUPTI kernels, copies, memsets and
/// syncs on their device (`pid`) and stream (`tid`), CUDA runtime and driver calls and NVTX
/// ranges on their host process and thread.
///
/// nsys numbers correlation ids per process, so a launch and the GPU work it started share the
/// correlation `pid << 32 | correlationId`, both sides taking the pid from their own serialized
/// id (`globalTid`, `globalPid`). Every table and column may be missing depending on the nsys
/// version (exports are lazy since 2023, columns were added mid-table), so columns are chosen
/// by name. Times are the export's own nanoseconds from the session start.
package enum NsysReader {
    /// Events handed to `events` at a time.
    static let batchSize = 1 << 16

    /// Reads the export at `path`, its events in batches in a fixed order: kernels, copies,
    /// memsets, syncs, runtime calls, NVTX ranges, each table by start time then row id. An
    /// event's `index` counts across all of them.
    package static func read(
        _ path: String, names: inout ProfileNames, progress: (_ fraction: Double) -> Void = { _ in },
        events: ([ProfileEvent]) throws -> Void
    ) throws -> KinetoFileInfo {
        try checkLength(path)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "nsys export"
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration)
            return try database.read { db in
                var export = try NsysExport(db, path: path)
                swap(&export.names, &names)
                defer { swap(&export.names, &names) }
                return try export.read(progress: progress, events: events)
            }
        } catch let error as DatabaseError {
            let reason = error.message ?? "\(error.resultCode)"
            throw ProfileReadError(
                file: path, message: "SQLite cannot read it as an Nsight Systems export: \(reason)")
        }
    }

    /// Throws when the file is shorter than its SQLite header says (a copy cut short): SQLite
    /// itself notices only on reading a missing page, and might never read one.
    private static func checkLength(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FileReadError(path: path, reason: .noSuchFile)
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        let length = (try? handle.seekToEnd()) ?? 0
        guard header.count == 100 else { return }
        func number(_ offset: Int, _ bytes: Int) -> UInt64 {
            header[offset..<offset + bytes].reduce(0) { $0 << 8 | UInt64($1) }
        }
        // The page count is valid only while the change counter equals version-valid-for.
        guard number(24, 4) == number(92, 4) else { return }
        let pageSize = number(16, 2) == 1 ? 65_536 : number(16, 2)
        let declared = pageSize * number(28, 4)
        if length < declared {
            throw ProfileReadError(
                file: path, message: "the file was cut short: \(length) of the \(declared) bytes its header declares")
        }
    }
}
