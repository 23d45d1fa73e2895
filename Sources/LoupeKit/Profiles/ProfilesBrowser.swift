import Foundation
import LoupeBase
import LoupeProfiling
import LoupeStore

/// The Profiles panel's port: the imported profiler traces; one opened on its timeline lanes (a
/// level of detail stored at import, so a gigabyte trace opens without reading its events), its
/// report, the events of a window, and two profiles compared.
///
/// Thread-safety: any thread.
package struct ProfilesBrowser: Sendable {
    private let profiles: ProfilerTables

    package init(database: any SQLDatabase) { profiles = ProfilerTables(database) }

    package init(workspace: Workspace) { self.init(database: workspace) }

    /// The profiles, newest first, each with its default window once its report is kept.
    package struct Listing: Hashable, Sendable {
        package var records: [ProfilerTraceRecord]
        /// By profile id; a profile not analysed yet has none.
        package var windows: [Int64: AnalysisWindow]

        package init(records: [ProfilerTraceRecord], windows: [Int64: AnalysisWindow] = [:]) {
            self.records = records
            self.windows = windows
        }
    }

    package func list() throws -> Listing {
        let records = try profiles.profilerTraces()
        let service = ProfileService(database: profiles.database)
        var windows: [Int64: AnalysisWindow] = [:]
        for record in records {
            if let id = record.id, let report = try service.keptReport(record) { windows[id] = report.window }
        }
        return Listing(records: records, windows: windows)
    }

    /// One GPU stream (or host thread) of one rank: its summary, and the events longer than a bin.
    package struct Lane: Hashable, Sendable {
        /// `stream 7`, or a host thread's name.
        package var label: String
        package var summary: TimelineLane
        package var long: [Event]

        package var rank: Int { summary.rank }
        package var isGPU: Bool { summary.isGPU }
        package var tid: Int64 { summary.tid }
    }

    /// An event on a lane, with what the timeline shows of it.
    package struct Event: Hashable, Sendable {
        package var start: Int64
        package var duration: Int64
        package var name: String
        package var family: KernelFamily?
        package var kind: ProfileEventKind
        package var index: Int
        package var end: Int64 { start + duration }

        package init(
            start: Int64, duration: Int64, name: String, family: KernelFamily?, kind: ProfileEventKind, index: Int
        ) {
            self.start = start
            self.duration = duration
            self.name = name
            self.family = family
            self.kind = kind
            self.index = index
        }

        /// Time order, the file's order among equal starts.
        package static func precedes(_ a: Event, _ b: Event) -> Bool { (a.start, a.index) < (b.start, b.index) }
    }

    /// A profile opened: its lanes for the timeline (each rank's GPU streams, then the host
    /// threads that launched work) and the time they cover, every event's. The report comes on
    /// its own (`report`): it reads every event the first time, and gives the window the views
    /// show.
    package struct Opened: Hashable, Sendable {
        package var record: ProfilerTraceRecord
        package var lanes: [Lane]
        package var start: Int64
        package var end: Int64
        /// The profile's stored columns that do not read back (its files), each naming the
        /// profile and the column; the timeline shows without what they held.
        package var unreadable: [StoredValueError] = []
    }

    /// The events of every lane in a window, each lane's in time order.
    package struct Detail: Hashable, Sendable {
        package var window: ClosedRange<Int64>
        package var lanes: [[Event]]
    }

    package func open(_ id: Int64) throws -> Opened { try opened(id).opened }

    /// The profile opened, and its names (which a window's or a step's events are named from).
    private func opened(_ id: Int64) throws -> (opened: Opened, names: ProfileNames) {
        let record = try self.record(id)
        let service = ProfileService(database: profiles.database)
        let summaries = try service.lanes(record)
        let names = ProfileNames(try profiles.profilerNames(traceID: id))
        var unreadable: [StoredValueError] = []
        var files = ProfileFiles()
        do {
            files = try ProfileFiles(record)
        } catch {
            unreadable.append(error)
        }
        let lanes = summaries.map { lane in
            Lane(
                label: Self.label(lane, names: names, threadNames: files.threadNames), summary: lane,
                long: lane.long.map { Self.event($0, names: names) })
        }
        let start = summaries.lazy.map(\.start).min() ?? record.startNs
        let end = summaries.lazy.map(\.end).max() ?? record.endNs
        let opened = Opened(
            record: record, lanes: lanes, start: start, end: max(end, start + 1), unreadable: unreadable)
        return (opened, names)
    }

    /// The profile's report over HTA's default window (kept once worked out), or over every
    /// step.
    package func report(_ id: Int64, allSteps: Bool = false, reporter: JobReporter = .detached()) throws
        -> ProfileReport
    {
        try ProfileService(database: profiles.database).report(try record(id), allSteps: allSteps, reporter: reporter)
    }

    /// The events of `lanes` that reach into `window`: those starting in it or a bin before it,
    /// and the lane's long ones that overlap it.
    package func detail(_ id: Int64, window: ClosedRange<Int64>) throws -> Detail {
        let (opened, names) = try opened(id)
        let lanes = opened.lanes
        let kinds = Set(ProfileEventKind.allCases.filter(TimelineLane.isDrawn).map { Int($0.rawValue) })
        var out = [[Event]](repeating: [], count: lanes.count)
        for rank in Set(lanes.map(\.rank)).sorted() {
            let here = lanes.indices.filter { lanes[$0].rank == rank }
            let lookBack = here.map { lanes[$0].summary.lookBack }.max() ?? 0
            var slot: [LaneKey: Int] = [:]
            for index in here { slot[LaneKey(tid: lanes[index].tid, isGPU: lanes[index].isGPU)] = index }
            let rows = try profiles.profilerEvents(
                traceID: id, rank: rank, from: window.lowerBound - lookBack, to: window.upperBound + 1, kinds: kinds)
            for row in rows {
                guard let kind = ProfileEventKind(rawValue: UInt8(clamping: row.kind)),
                    let index = slot[LaneKey(tid: row.tid, isGPU: kind.isStreamWork)],
                    row.startNs + row.durationNs >= window.lowerBound
                else { continue }
                let lane = lanes[index].summary
                // The long ones come from the lane's summary, once.
                guard Double(row.durationNs) <= lane.binWidth else { continue }
                out[index].append(Self.event(row, kind: kind, names: names))
            }
            for index in here {
                out[index] += lanes[index].long.filter { $0.end >= window.lowerBound && $0.start <= window.upperBound }
                out[index].sort(by: Event.precedes)
            }
        }
        return Detail(window: window, lanes: out)
    }

    /// The event on `lane` after (`forward`) or before `from`, or the first one at or after
    /// `time` when there is no `from`.
    package func step(_ id: Int64, lane index: Int, from: Event?, time: Int64, forward: Bool) throws -> Event? {
        let (opened, names) = try opened(id)
        guard opened.lanes.indices.contains(index) else { return nil }
        let lane = opened.lanes[index]
        let kinds = Set(
            ProfileEventKind.allCases.filter { TimelineLane.isDrawn($0) && $0.isStreamWork == lane.isGPU }
                .map { Int($0.rawValue) })
        let row = try profiles.profilerEvent(
            traceID: id, rank: lane.rank, tid: lane.tid, kinds: kinds, after: from?.start ?? time,
            index: from?.index ?? (forward ? -1 : Int.max), forward: forward)
        return row.flatMap { row in
            ProfileEventKind(rawValue: UInt8(clamping: row.kind)).map { Self.event(row, kind: $0, names: names) }
        }
    }

    /// What an event's `args` say of its launch, in a line: grid, block, registers, shared
    /// memory, occupancy (a kernel), or its inputs' shapes (an operator); nil when none. Args
    /// that do not read back are a ``StoredValueError`` naming the event, not an event without.
    package func launchSummary(_ id: Int64, rank: Int, index: Int) throws -> String? {
        guard let json = try profiles.profilerEventArgs(traceID: id, rank: rank, index: index) else { return nil }
        let args = try JSONValue.parse(
            stored: json, "args", row: "profile \(id), rank \(rank), event \(index)", column: "args")
        return Self.launchSummary(args)
    }

    static func launchSummary(_ args: JSONValue) -> String? {
        func dims(_ key: String) -> String? {
            guard case .array(let values) = args[key] ?? .null else { return nil }
            let numbers = values.compactMap(\.int)
            return numbers.isEmpty ? nil : numbers.map(String.init).joined(separator: "×")
        }
        var parts: [String] = []
        if let grid = dims("grid") { parts.append("grid \(grid)") }
        if let block = dims("block") { parts.append("block \(block)") }
        if let registers = args["registers per thread"]?.int { parts.append("\(registers) regs") }
        if let shared = args["shared memory"]?.int { parts.append("\(shared) B shared") }
        if let occupancy = args["est. achieved occupancy %"]?.number { parts.append("occupancy \(Int(occupancy))%") }
        if let bytes = args["bytes"]?.int { parts.append("\(bytes) B") }
        if case .array(let inputs) = args["Input Dims"] ?? .null {
            let shapes = inputs.compactMap { input -> String? in
                guard case .array(let sizes) = input, !sizes.isEmpty else { return nil }
                return "[" + sizes.compactMap(\.int).map(String.init).joined(separator: "×") + "]"
            }
            if !shapes.isEmpty { parts.append("inputs " + shapes.joined(separator: " ")) }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    package func compare(before: Int64, after: Int64, allSteps: Bool = false) throws -> ProfileComparison {
        let service = ProfileService(database: profiles.database)
        return ProfileComparison.make(
            try service.load(try record(before)), try service.load(try record(after)), allSteps: allSteps)
    }

    private func record(_ id: Int64) throws -> ProfilerTraceRecord {
        guard let record = try profiles.profilerTrace(id: id) else {
            throw ProfileReadError(file: "profile \(id)", message: "no such profile (it may have been deleted)")
        }
        return record
    }

    private struct LaneKey: Hashable {
        var tid: Int64
        var isGPU: Bool
    }

    static func event(_ event: TimelineEvent, names: ProfileNames) -> Event {
        Event(
            start: event.start, duration: event.duration, name: names[event.name], family: event.family,
            kind: event.kind, index: event.index)
    }

    static func event(_ row: ProfilerEventRow, kind: ProfileEventKind, names: ProfileNames) -> Event {
        Event(
            start: row.startNs, duration: max(0, row.durationNs), name: names[row.name],
            family: kind.isStreamWork ? names.family(name: row.name, kind: kind) : nil, kind: kind, index: row.index)
    }

    /// `stream 7`; a host thread by the name its trace gave it, else its number.
    static func label(_ lane: TimelineLane, names: ProfileNames, threadNames: [Int: [String: String]]) -> String {
        if lane.isGPU { return "stream \(lane.tid)" }
        let named = lane.tid < 0 ? names[Int32(-lane.tid - 1)] : ""
        if !named.isEmpty { return named }
        if let given = threadNames[lane.rank]?["\(lane.pid)/\(lane.tid)"], !given.isEmpty { return given }
        return lane.tid >= 0 ? "thread \(lane.tid)" : "thread ?"
    }
}
