import LoupeProfiling
import LoupeStore

/// The Profiles panel's port: the imported profiler traces, one opened with its report and its
/// timeline lanes, and two compared.
///
/// Thread-safety: any thread.
package struct ProfilesBrowser: Sendable {
    private let workspace: Workspace

    package init(workspace: Workspace) { self.workspace = workspace }

    package func list() throws -> [ProfilerTraceRecord] { try workspace.profilerTraces() }

    /// One GPU stream (or host thread) of one rank, its events in time order.
    package struct Lane: Hashable, Sendable {
        package var rank: Int
        /// `stream 7`, or a host thread's name.
        package var label: String
        package var isGPU: Bool
        package var events: [Event]
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
    }

    /// A profile opened: its report, and its lanes for the timeline (GPU streams first, then
    /// the host threads that launched work).
    package struct Opened: Hashable, Sendable {
        package var record: ProfilerTraceRecord
        package var report: ProfileReport
        package var lanes: [Lane]
        package var start: Int64
        package var end: Int64
    }

    package func open(_ id: Int64, allSteps: Bool = false) throws -> Opened {
        let service = ProfileService(workspace: workspace)
        guard let record = try workspace.profilerTrace(id: id) else {
            throw ProfileReadError(file: "profile \(id)", message: "no such profile (it may have been deleted)")
        }
        let loaded = try service.load(record)
        return Self.opened(loaded, allSteps: allSteps)
    }

    static func opened(_ loaded: ProfileService.Loaded, allSteps: Bool) -> Opened {
        let names = loaded.names
        var lanes: [Lane] = []
        for rank in loaded.ranks {
            var gpu: [Int64: [Event]] = [:]
            var host: [Int64: [Event]] = [:]
            for e in rank.events {
                let name = names[e.name]
                if e.kind.isStreamWork {
                    gpu[e.tid, default: []].append(
                        Event(
                            start: e.start, duration: e.duration, name: name,
                            family: names.family(e),
                            kind: e.kind, index: e.index))
                } else if e.kind == .runtime || e.kind == .cpuOp || e.kind == .annotation {
                    host[e.tid, default: []].append(
                        Event(
                            start: e.start, duration: e.duration, name: name, family: nil, kind: e.kind, index: e.index)
                    )
                }
            }
            for stream in gpu.keys.sorted() {
                lanes.append(
                    Lane(
                        rank: rank.rank, label: "stream \(stream)", isGPU: true,
                        events: gpu[stream]!.sorted { ($0.start, $0.index) < ($1.start, $1.index) }))
            }
            // Host threads with the most events first; a CPU-only trace has only these.
            for thread in host.keys.sorted(by: { (host[$0]!.count, $1) > (host[$1]!.count, $0) }).prefix(4) {
                lanes.append(
                    Lane(
                        rank: rank.rank,
                        label: thread >= 0
                            ? "thread \(thread)"
                            : names[Int32(-thread - 1)].isEmpty ? "thread ?" : names[Int32(-thread - 1)], isGPU: false,
                        events: host[thread]!.sorted { ($0.start, $0.index) < ($1.start, $1.index) }))
            }
        }
        let start = lanes.compactMap { $0.events.first?.start }.min() ?? loaded.record.startNs
        let end = lanes.compactMap { $0.events.map(\.end).max() }.max() ?? loaded.record.endNs
        return Opened(
            record: loaded.record, report: ProfileReport.make(loaded, allSteps: allSteps), lanes: lanes, start: start,
            end: max(end, start + 1))
    }

    package func compare(before: Int64, after: Int64) throws -> ProfileComparison {
        let service = ProfileService(workspace: workspace)
        func load(_ id: Int64) throws -> ProfileService.Loaded {
            guard let record = try workspace.profilerTrace(id: id) else {
                throw ProfileReadError(file: "profile \(id)", message: "no such profile")
            }
            return try service.load(record)
        }
        return ProfileComparison.make(try load(before), try load(after))
    }
}
