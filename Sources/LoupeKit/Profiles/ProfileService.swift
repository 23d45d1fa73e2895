import Foundation
import LoupeBase
import LoupeProfiling
import LoupeStore
import Synchronization

/// Imports profiler traces (PyTorch/Kineto Chrome-trace JSON, one file per rank) and reads them
/// back for `loupe profile …` and the Profiles view.
package struct ProfileService: Sendable {
    /// The profiles, on the workspace's backend: a SQLite file or PostgreSQL.
    package let profiles: ProfilerTables

    package init(database: any SQLDatabase) { profiles = ProfilerTables(database) }

    package init(workspace: Workspace) { self.init(database: workspace) }

    /// What an import did.
    package struct ImportReport: Hashable, Sendable {
        package var id: Int64
        package var name: String
        package var unchanged: Bool
        package var files: [KinetoFileInfo]
        package var ranks: Int
        package var events: Int
        package var bytes: Int
        /// HTA's default window, analysed at import so the list shows its span from the start;
        /// nil when the files were imported before (`unchanged`).
        package var window: AnalysisWindow?
    }

    /// The trace files `paths` name: files as given, and in a directory every `.json`,
    /// `.json.gz` and `.sqlite` (one per rank, as HTA reads a trace directory), in name order.
    package static func traceFiles(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0 else { throw FileReadError(path: path, errno: errno) }
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR {
                let inside = try Self.names(inDirectory: path).sorted()
                    .filter { name in [".json", ".json.gz", ".gz", ".sqlite"].contains { name.hasSuffix($0) } }
                guard !inside.isEmpty else {
                    throw ProfileReadError(
                        file: path, message: "the directory holds no .json, .json.gz or .sqlite trace")
                }
                files += inside.map { (path as NSString).appendingPathComponent($0) }
            } else if type == S_IFREG {
                files.append(path)
            } else {
                // A file is read twice (its first and last megabyte tell a re-import, then its
                // events), which a pipe cannot be; a FIFO with no writer would wait forever.
                throw ProfileReadError(
                    file: path, message: "it is a pipe or a device, not a regular file: save the trace to a file first")
            }
        }
        return files
    }

    /// The names in the directory at `path`, or why it cannot be listed (permission denied).
    private static func names(inDirectory path: String) throws(FileReadError) -> [String] {
        guard let directory = opendir(path) else { throw FileReadError(path: path, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A key that is the same for the same files: each one's name and size, and a hash of its
    /// first and last megabyte (a whole-file hash would read gigabytes twice).
    static func sourceKey(_ files: [String]) throws -> String {
        try files.map { path throws(FileReadError) in
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw FileReadError(path: path, errno: errno) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw FileReadError(path: path, errno: errno) }
            let size = Int(info.st_size)
            // The fingerprint traces' re-imports are told by.
            var hash = ContentHash()
            hash.add(try Self.bytes(fd, path: path, at: 0, count: min(size, 1 << 20)))
            if size > 2 << 20 { hash.add(try Self.bytes(fd, path: path, at: size - (1 << 20), count: 1 << 20)) }
            return "\((path as NSString).lastPathComponent):\(size):\(hash.hex)"
        }.joined(separator: "|")
    }

    /// `count` bytes of the open file `fd` from `offset` (fewer at its end).
    private static func bytes(_ fd: Int32, path: String, at offset: Int, count: Int) throws(FileReadError) -> Data {
        var data = Data(count: count)
        var filled = 0
        while filled < count {
            let n = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, count - filled, offset + filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw FileReadError(path: path, errno: errno) }
            if n == 0 { break }
            filled += n
        }
        return data.prefix(filled)
    }

    /// Reads the files as one profile (one rank each) and stores it in one transaction: a bad
    /// file stores nothing, and the error names it and the event. Importing the same files again
    /// changes nothing.
    package func importFiles(
        _ paths: [String], name: String? = nil, reporter: JobReporter = .detached()
    ) throws -> ImportReport {
        let files = try Self.traceFiles(paths)
        let sizes = files.map { (try? TextFile.readableSize($0)) ?? 0 }
        let total = Double(max(1, sizes.reduce(0, +)))
        let key = try Self.sourceKey(files)
        // A file's disk is checked; a server's is the server's to mind.
        if let file = profiles.database.file { try Self.checkSpace(for: files, besides: file) }
        let title = name ?? Self.defaultName(paths)
        let readFailure = Mutex<(any Error)?>(nil)
        let infos = Mutex<[KinetoFileInfo]>([])
        let result: (id: Int64, unchanged: Bool)
        do {
            result = try profiles.importProfilerTrace(sourceKey: key) { writer in
                do {
                    var names = ProfileNames()
                    var timeline = TimelineBuilder()
                    var read: [KinetoFileInfo] = []
                    var done = 0
                    for (slot, file) in files.enumerated() {
                        try reporter.checkCancellation()
                        let info = try ProfileFile.read(
                            file, names: &names,
                            progress: { fraction in
                                reporter.report(
                                    JobProgress(
                                        completed: Double(done) + fraction * Double(sizes[slot]), total: total,
                                        detail: (file as NSString).lastPathComponent))
                            }
                        ) { events in
                            for event in events {
                                timeline.add(event, rank: slot)
                                try writer.insert(
                                    ProfilerEventRow(
                                        rank: slot, kind: Int(event.kind.rawValue), name: event.name,
                                        category: event.category, startNs: event.start, durationNs: event.duration,
                                        pid: event.pid, tid: event.tid, correlation: event.correlation,
                                        externalID: event.externalID, index: event.index, args: event.args))
                            }
                        }
                        done += sizes[slot]
                        read.append(info)
                    }
                    let ranks = try Self.ranks(read)
                    let renumbered = Dictionary(uniqueKeysWithValues: ranks.enumerated().map { ($0, $1) })
                    try writer.renumberRanks(renumbered)
                    timeline.renumberRanks(renumbered)
                    infos.withLock { $0 = read }
                    let record = ProfilerTraceRecord(
                        name: title, sourceKey: key, filesJSON: Self.filesJSON(read, ranks: ranks), ranks: read.count,
                        events: writer.count, startNs: read.map(\.start).min() ?? 0,
                        endNs: read.map(\.end).max() ?? 0)
                    return (record, names.names, timeline.lanes(names: names).map(Self.row))
                } catch {
                    // The reader's errors say which file and event; the workspace's own (a full
                    // disk) are translated by it on the way out.
                    if error is ProfileReadError || error is FileReadError || error is JobCancelled {
                        readFailure.withLock { $0 = error }
                    }
                    throw error
                }
            }
        } catch {
            // The reader's own error (naming the file and event), not the workspace's wrapping.
            if let failure = readFailure.withLock({ $0 }) { throw failure }
            throw error
        }
        let stored = try profiles.profilerTrace(id: result.id)
        // The default report is worked out and kept now, not on first open: every view, the
        // list included, then states the same window and span from the start.
        var window: AnalysisWindow?
        if !result.unchanged, let stored {
            window = try report(stored, reporter: reporter).window
        }
        return ImportReport(
            id: result.id, name: stored?.name ?? title, unchanged: result.unchanged, files: infos.withLock { $0 },
            ranks: stored?.ranks ?? 0, events: stored?.events ?? 0, bytes: Int(total), window: window)
    }

    /// The least the stored events take per byte of trace read: a generated 1 GB Kineto trace
    /// stores 0.54 bytes a byte; half that leaves room for denser files, so a refusal is sure.
    static let leastStoredPerByte = 0.25

    /// Refuses, before reading anything, an import the disk beside the workspace surely cannot
    /// hold (a 5 GB trace onto a nearly full disk): the least it needs against what is free.
    /// What it lets through and still fills the disk fails in SQLite and rolls back.
    static func checkSpace(for files: [String], besides workspace: String) throws {
        guard let free = Workspace.freeBytes(besides: workspace) else { return }
        let need = Int64(Double(files.reduce(0) { $0 + inflatedSize($1) }) * leastStoredPerByte)
        guard need > free else { return }
        func size(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
        throw ProfileReadError(
            file: files.count == 1 ? files[0] : "\(files.count) files",
            message:
                "storing its events needs at least \(size(need)) and the disk beside \(workspace) has \(size(free)) "
                + "free: free some space, or import into a workspace on another disk (--workspace); nothing was stored")
    }

    /// A file's size once inflated: a gzip's trailer gives it (modulo 4 GiB, so a bigger file
    /// counts its compressed size four times, less than any JSON trace inflates).
    package static func inflatedSize(_ path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try? handle.seek(toOffset: 0)
        let magic = [UInt8]((try? handle.read(upToCount: 2)) ?? Data())
        guard magic == [0x1f, 0x8b], size > 8 else { return size }
        try? handle.seek(toOffset: UInt64(size - 4))
        let trailer = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        guard trailer.count == 4 else { return size }
        let inflated = trailer.reversed().reduce(0) { $0 << 8 | Int($1) }
        return size < 1 << 32 && inflated >= size ? inflated : 4 * size
    }

    /// Each file's rank: its `distributedInfo.rank`, else its place in the list. Two files of
    /// one rank are an error.
    static func ranks(_ files: [KinetoFileInfo]) throws -> [Int] {
        let ranks = files.enumerated().map { $1.rank ?? $0 }
        var seen: [Int: String] = [:]
        for (rank, file) in zip(ranks, files) {
            if let other = seen[rank] {
                throw ProfileReadError(
                    file: file.path, message: "it is rank \(rank), and so is \(other): import each rank's file once")
            }
            seen[rank] = file.path
        }
        return ranks
    }

    static func filesJSON(_ files: [KinetoFileInfo], ranks: [Int]) -> String {
        let entries: [JSONValue] = zip(files, ranks).map { file, rank in
            var object: [String: JSONValue] = [
                "path": .string(file.path), "rank": .number(Double(rank)), "events": .number(Double(file.events)),
            ]
            if let worldSize = file.worldSize { object["world_size"] = .number(Double(worldSize)) }
            // The trace file's own device properties, kept as JSON when they are JSON.
            if let device = file.deviceProperties, let value = try? JSONValue.parse(device) {
                object["device_properties"] = value
            }
            if !file.passedOver.isEmpty {
                object["passed_over"] = .object(file.passedOver.mapValues { .number(Double($0)) })
            }
            if !file.threadNames.isEmpty {
                object["thread_names"] = .object(file.threadNames.mapValues { .string($0) })
            }
            return .object(object)
        }
        return JSONValue.array(entries).compactJSON
    }

    static func defaultName(_ paths: [String]) -> String {
        let first = ((paths.first ?? "profile") as NSString).lastPathComponent
        var name = first
        for suffix in [".gz", ".json", ".pt.trace"] where name.hasSuffix(suffix) {
            name = String(name.dropLast(suffix.count))
        }
        return paths.count > 1 ? "\(name) +\(paths.count - 1)" : name
    }

    // MARK: Reading

    /// A stored profile with its events, ready for the analyses.
    package struct Loaded: Sendable {
        package var record: ProfilerTraceRecord
        package var names: ProfileNames
        package var ranks: [RankEvents]
    }

    /// The profile `reference` names: its id, or a unique part of its name.
    package func resolve(_ reference: String) throws -> ProfilerTraceRecord {
        let all = try profiles.profilerTraces()
        if let id = Int64(reference), let found = all.first(where: { $0.id == id }) { return found }
        let matches = all.filter { $0.name.localizedCaseInsensitiveContains(reference) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty {
            throw ProfileReadError(
                file: reference,
                message: all.isEmpty
                    ? "no profile in this workspace: import one with `loupe profile import FILE…`"
                    : "no profile has this id or name (`loupe profile list` shows them)")
        }
        throw ProfileReadError(
            file: reference,
            message:
                "names several profiles (\(matches.compactMap(\.id).map(String.init).joined(separator: ", "))): give an id"
        )
    }

    static func row(_ lane: TimelineLane) -> ProfilerLaneRow {
        ProfilerLaneRow(
            rank: lane.rank, tid: lane.tid, pid: lane.pid, isGPU: lane.isGPU, events: lane.events, startNs: lane.start,
            endNs: lane.end, bins: lane.encodedBins, longEvents: lane.encodedLong)
    }

    /// The profile's timeline lanes as stored at import; a profile imported before lanes were
    /// kept (or whose stored lanes cannot be read) has them worked out from its events once, and
    /// kept.
    package func lanes(_ record: ProfilerTraceRecord) throws -> [TimelineLane] {
        let id = record.id ?? 0
        let stored = try profiles.profilerLanes(traceID: id)
        let decoded = stored.compactMap { row -> TimelineLane? in
            guard let (bins, long) = TimelineLane.decode(bins: row.bins, long: row.longEvents) else { return nil }
            return TimelineLane(
                rank: row.rank, tid: row.tid, pid: row.pid, isGPU: row.isGPU, events: row.events, start: row.startNs,
                end: row.endNs, bins: bins, long: long)
        }
        if !stored.isEmpty, decoded.count == stored.count { return decoded }
        guard record.events > 0 else { return [] }
        let loaded = try load(record)
        var timeline = TimelineBuilder()
        for rank in loaded.ranks {
            for event in rank.events { timeline.add(event, rank: rank.rank) }
        }
        let lanes = timeline.lanes(names: loaded.names)
        try profiles.storeProfilerLanes(lanes.map(Self.row), traceID: id)
        return lanes
    }

    /// The profile's report over HTA's default window, worked out from every event the first
    /// time it is asked for and kept: opening the profile again reads it back. With `allSteps`
    /// (every ProfilerStep kept) it is worked out each time.
    package func report(
        _ record: ProfilerTraceRecord, allSteps: Bool = false, reporter: JobReporter = .detached()
    ) throws -> ProfileReport {
        let id = record.id ?? 0
        if !allSteps, let report = try keptReport(record) { return report }
        reporter.report(JobProgress(completed: 0, total: 2, detail: "reading \(record.events) events"))
        let loaded = try load(record)
        try reporter.checkCancellation()
        reporter.report(JobProgress(completed: 1, total: 2, detail: "analysing"))
        let report = ProfileReport.make(loaded, allSteps: allSteps)
        // The kept report is a cache: one that cannot be encoded is worked out again next time.
        if !allSteps, let data = try? JSONEncoder().encode(report) {
            try profiles.storeProfilerReport(String(decoding: data, as: UTF8.self), traceID: id)
        }
        return report
    }

    /// The default report as kept, nil before it is first worked out (or when it was kept by
    /// an older Loupe whose report this one cannot read: it is worked out again).
    package func keptReport(_ record: ProfilerTraceRecord) throws -> ProfileReport? {
        let id = record.id ?? 0
        guard let json = try profiles.profilerReport(traceID: id),
            let report = try? JSONDecoder().decode(ProfileReport.self, from: Data(json.utf8)), report.id == id
        else { return nil }
        return report
    }

    package func load(_ record: ProfilerTraceRecord) throws -> Loaded {
        let id = record.id ?? 0
        let names = ProfileNames(try profiles.profilerNames(traceID: id))
        var byRank: [Int: [ProfileEvent]] = [:]
        for row in try profiles.profilerEvents(traceID: id) {
            guard let kind = ProfileEventKind(rawValue: UInt8(clamping: row.kind)) else { continue }
            byRank[row.rank, default: []].append(
                ProfileEvent(
                    kind: kind, name: row.name, category: row.category, start: row.startNs, duration: row.durationNs,
                    pid: row.pid, tid: row.tid, correlation: row.correlation, externalID: row.externalID,
                    index: row.index))
        }
        return Loaded(
            record: record, names: names,
            ranks: byRank.keys.sorted().map { RankEvents(rank: $0, events: byRank[$0]!) })
    }
}
