import GRDB
import LoupeBase

/// Each event table's rows as the events Kineto would have written for them: the same kinds,
/// categories, names (`Memcpy HtoD (Pageable -> Device)`, `Stream Sync`, `cudaLaunchKernel`)
/// and `args` keys.
extension NsysExport {
    // MARK: GPU activity

    /// The columns every CUPTI activity table starts with; each table's own columns follow.
    private enum KernelColumn: Int, NsysColumn {
        case start, end, deviceId, streamId, correlationId, globalPid, contextId
        case demangledName, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ
        case registersPerThread, staticSharedMemory, dynamicSharedMemory
    }

    private enum CopyColumn: Int, NsysColumn {
        case start, end, deviceId, streamId, correlationId, globalPid, contextId
        case bytes, copyKind, srcKind, dstKind
    }

    private enum MemsetColumn: Int, NsysColumn {
        case start, end, deviceId, streamId, correlationId, globalPid, contextId
        case bytes, memKind
    }

    private enum SyncColumn: Int, NsysColumn {
        case start, end, deviceId, streamId, correlationId, globalPid, contextId
        case syncType
    }

    /// The lane, correlation and `args` every GPU activity has, from its first seven columns.
    private struct Activity {
        var start: Int64
        var end: Int64
        var device: Int64
        var stream: Int64
        var correlation: Int64
        /// `{"device":0,"context":1,"stream":7,"correlation":158` without its closing brace.
        var args: String
    }

    private mutating func activity<Column: NsysColumn>(
        _ row: NsysRow<Column>, _ columns: [Column]
    ) throws -> Activity {
        let (start, end) = try row.interval(start: columns[0], end: columns[1])
        let device = try row.required(columns[2])
        var stream = try row.required(columns[3])
        // Syncs of a whole context or of an event carry no stream (CUPTI's invalid value);
        // Kineto writes -1.
        if stream == 0xFFFF_FFFF { stream = -1 }
        let id = row.integer(columns[4])
        let process = row.integer(columns[5]).map(Self.process(ofGlobalID:)) ?? 0
        var args = "{\"device\":\(device)"
        if let context = row.integer(columns[6]) { args += ",\"context\":\(context)" }
        args += ",\"stream\":\(stream)"
        if let id { args += ",\"correlation\":\(id)" }
        streams.insert(Lane(process: device, thread: stream))
        return Activity(
            start: start, end: end, device: device, stream: stream,
            correlation: Self.correlation(id, process: process), args: args)
    }

    private func event(_ activity: Activity, _ kind: ProfileEventKind, name: Int32, category: Int32, args: String)
        -> ProfileEvent
    {
        ProfileEvent(
            kind: kind, name: name, category: category, start: activity.start,
            duration: activity.end - activity.start, pid: activity.device, tid: activity.stream,
            correlation: activity.correlation, index: 0, args: args)
    }

    /// `"bytes":N,"memory bandwidth (GB/s)":B` as Kineto adds them to copies and memsets.
    private static func bandwidthArgs(bytes: Int64?, _ activity: Activity) -> String {
        guard let bytes else { return "" }
        var args = ",\"bytes\":\(bytes)"
        let nanoseconds = activity.end - activity.start
        if nanoseconds > 0 { args += ",\"memory bandwidth (GB/s)\":\(Double(bytes) / Double(nanoseconds))" }
        return args
    }

    /// Kernels, named by their demangled name (the short name in an export without one).
    mutating func readKernels(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let table = "CUPTI_ACTIVITY_KIND_KERNEL"
        guard tables.contains(table) else { return }
        let present = Set(try db.columns(in: table).map(\.name))
        guard present.contains("demangledName") || present.contains("shortName") else {
            throw ProfileReadError(file: path, message: "\(table) has neither a demangledName nor a shortName column")
        }
        let category = names.intern("kernel")
        try scan(
            table, KernelColumn.self, required: [.start, .end, .deviceId, .streamId], progress: progress,
            events: events
        ) { export, row in
            let activity = try export.activity(row, KernelColumn.allCases)
            var column = KernelColumn.demangledName
            if row.integer(.demangledName) == nil { column = .shortName }
            let id = try row.required(column)
            let name: Int32
            if let known = export.kernelNames[id] {
                name = known
            } else {
                name = export.names.intern(try export.string(id, for: row, column))
                export.kernelNames[id] = name
            }
            var args = activity.args
            if let x = row.integer(.gridX), let y = row.integer(.gridY), let z = row.integer(.gridZ) {
                args += ",\"grid\":[\(x),\(y),\(z)]"
            }
            if let x = row.integer(.blockX), let y = row.integer(.blockY), let z = row.integer(.blockZ) {
                args += ",\"block\":[\(x),\(y),\(z)]"
            }
            if let registers = row.integer(.registersPerThread) { args += ",\"registers per thread\":\(registers)" }
            let shared = [row.integer(.staticSharedMemory), row.integer(.dynamicSharedMemory)].compactMap { $0 }
            if !shared.isEmpty { args += ",\"shared memory\":\(shared.reduce(0, +))" }
            return export.event(activity, .kernel, name: name, category: category, args: args + "}")
        }
    }

    /// Copies, named as Kineto names them: `Memcpy DtoH (Device -> Pageable)`.
    mutating func readCopies(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let category = names.intern("gpu_memcpy")
        try scan(
            "CUPTI_ACTIVITY_KIND_MEMCPY", CopyColumn.self, required: [.start, .end, .deviceId, .streamId],
            progress: progress, events: events
        ) { export, row in
            let activity = try export.activity(row, CopyColumn.allCases)
            let kinds = [row.integer(.copyKind), row.integer(.srcKind), row.integer(.dstKind)]
            let name: Int32
            if let known = export.copyNames[kinds] {
                name = known
            } else {
                var text = "Memcpy"
                if let kind = kinds[0] { text += " " + (export.copyKinds[kind] ?? "Unknown") }
                if let source = kinds[1], let destination = kinds[2] {
                    text += " (\(export.memoryKinds[source] ?? "Unknown") -> "
                    text += "\(export.memoryKinds[destination] ?? "Unknown"))"
                }
                name = export.names.intern(text)
                export.copyNames[kinds] = name
            }
            let args = activity.args + Self.bandwidthArgs(bytes: row.integer(.bytes), activity) + "}"
            return export.event(activity, .memcpy, name: name, category: category, args: args)
        }
    }

    /// Memsets, named by the memory they set: `Memset (Device)`.
    mutating func readMemsets(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let category = names.intern("gpu_memset")
        try scan(
            "CUPTI_ACTIVITY_KIND_MEMSET", MemsetColumn.self, required: [.start, .end, .deviceId, .streamId],
            progress: progress, events: events
        ) { export, row in
            let activity = try export.activity(row, MemsetColumn.allCases)
            let kind = row.integer(.memKind)
            let name: Int32
            if let known = export.memsetNames[kind] {
                name = known
            } else {
                name = export.names.intern(kind.map { "Memset (\(export.memoryKinds[$0] ?? "Unknown"))" } ?? "Memset")
                export.memsetNames[kind] = name
            }
            let args = activity.args + Self.bandwidthArgs(bytes: row.integer(.bytes), activity) + "}"
            return export.event(activity, .memset, name: name, category: category, args: args)
        }
    }

    /// Synchronisations, named by CUPTI's sync type as Kineto names them (`Stream Sync`).
    mutating func readSyncs(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let category = names.intern("cuda_sync")
        let kinds: [Int64: String] = [
            1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync",
        ]
        try scan(
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", SyncColumn.self, required: [.start, .end, .deviceId, .streamId],
            progress: progress, events: events
        ) { export, row in
            let activity = try export.activity(row, SyncColumn.allCases)
            let kind = row.integer(.syncType)
            let text = kind.flatMap { kinds[$0] } ?? "Unknown Sync"
            let name: Int32
            if let known = export.syncNames[kind] {
                name = known
            } else {
                name = export.names.intern(text)
                export.syncNames[kind] = name
            }
            let args = activity.args + ",\"cuda_sync_kind\":\"\(text)\"}"
            return export.event(activity, .sync, name: name, category: category, args: args)
        }
    }

    // MARK: Host

    private enum CallColumn: Int, NsysColumn {
        case start, end, globalTid, correlationId, nameId, eventClass, returnValue
    }

    /// CUDA runtime (event class 0) and driver (1) calls on their host thread, named without
    /// CUPTI's version suffix (`cudaLaunchKernel_v7000` is `cudaLaunchKernel`, as Kineto and
    /// the launch analysis name it). The backtrace rows (class 67) repeat a call under the same
    /// correlation and are passed over, as are other classes.
    mutating func readCalls(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let runtime = names.intern("cuda_runtime")
        let driver = names.intern("cuda_driver")
        try scan(
            "CUPTI_ACTIVITY_KIND_RUNTIME", CallColumn.self, required: [.start, .end, .nameId], progress: progress,
            events: events
        ) { export, row in
            let eventClass = row.integer(.eventClass) ?? 0
            guard eventClass == 0 || eventClass == 1 else {
                let why = eventClass == 67 ? "CUDA backtrace row" : "runtime row of event class \(eventClass)"
                export.info.passedOver[why, default: 0] += 1
                return nil
            }
            let (start, end) = try row.interval(start: .start, end: .end)
            let thread = row.integer(.globalTid) ?? 0
            let lane = Lane(process: Self.process(ofGlobalID: thread), thread: Self.thread(ofGlobalID: thread))
            export.processes.insert(lane.process)
            export.threads.insert(lane)
            let id = try row.required(.nameId)
            let name: Int32
            if let known = export.callNames[id] {
                name = known
            } else {
                name = export.names.intern(Self.withoutVersionSuffix(try export.string(id, for: row, .nameId)))
                export.callNames[id] = name
            }
            let correlation = row.integer(.correlationId)
            var args: String?
            if let correlation { args = "{\"correlation\":\(correlation)" }
            if let value = row.integer(.returnValue), value != 0 {
                args = (args.map { $0 + "," } ?? "{") + "\"return value\":\(value)"
            }
            return ProfileEvent(
                kind: .runtime, name: name, category: eventClass == 1 ? driver : runtime, start: start,
                duration: end - start, pid: lane.process, tid: lane.thread,
                correlation: Self.correlation(correlation, process: lane.process), index: 0,
                args: args.map { $0 + "}" })
        }
    }

    /// `cudaLaunchKernel_v7000` without the CUPTI API version CUPTI appends, `cudaLaunchKernel`.
    /// Only a suffix of four or more digits is one: `cuMemAlloc_v2` is the driver call's name.
    static func withoutVersionSuffix(_ name: String) -> String {
        guard let underscore = name.lastIndex(of: "_") else { return name }
        let suffix = name[name.index(after: underscore)...]
        let digits = suffix.dropFirst()
        guard suffix.first == "v", digits.count >= 4, digits.allSatisfy({ ("0"..."9").contains($0) }) else {
            return name
        }
        return String(name[..<underscore])
    }

    private enum RangeColumn: Int, NsysColumn {
        case start, end, eventType, globalTid, text, textId, domainId
    }

    /// NVTX event types that are ranges: push/pop and start/end, NVTX and NVTXT.
    private static let rangeTypes: Set<Int64> = [59, 60, 70, 71]

    /// What the other NVTX event types are, for the passed-over counts.
    private static let nvtxKinds: [Int64: String] = [
        33: "NVTX category", 34: "NVTX mark", 39: "NVTX thread name", 64: "NVTX category", 65: "NVTX mark",
        72: "NVTX thread name", 73: "NVTX process name", 75: "NVTX domain", 76: "NVTX domain",
        97: "NVTX CUDA device name", 98: "NVTX CUDA context name", 99: "NVTX CUDA stream name",
    ]

    /// NVTX ranges with an end, as annotations on the thread that opened them, named by their
    /// text (inline or registered). Marks and names (no end) are passed over; a thread's NVTX
    /// name names it where ThreadNames does not.
    mutating func readRanges(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws {
        let category = names.intern("nvtx")
        try scan(
            "NVTX_EVENTS", RangeColumn.self, required: [.start, .end], progress: progress, events: events
        ) { export, row in
            let type = row.integer(.eventType)
            let thread = row.integer(.globalTid) ?? 0
            let lane = Lane(process: Self.process(ofGlobalID: thread), thread: Self.thread(ofGlobalID: thread))
            guard let end = row.integer(.end), type.map(Self.rangeTypes.contains) ?? true else {
                if type == 39, let text = row.text(.text) { export.nvtxThreadNames[lane] = text }
                let why = type.map { Self.nvtxKinds[$0] ?? "NVTX event of type \($0)" } ?? "NVTX event without end"
                export.info.passedOver[why, default: 0] += 1
                return nil
            }
            let start = try row.required(.start)
            guard end >= start else { throw row.failure("it ends (\(end) ns) before it starts (\(start) ns)") }
            let name: Int32
            if let text = row.text(.text) {
                name = export.names.intern(text)
            } else if let id = row.integer(.textId) {
                if let known = export.rangeNames[id] {
                    name = known
                } else {
                    name = export.names.intern(try export.string(id, for: row, .textId))
                    export.rangeNames[id] = name
                }
            } else {
                name = export.names.intern("NVTX range")
            }
            export.processes.insert(lane.process)
            export.threads.insert(lane)
            var args: String?
            if let domain = row.integer(.domainId), let domainName = export.nvtxDomains[domain] {
                if let known = export.domainArgs[domain] {
                    args = known
                } else {
                    args = JSONValue.object(["domain": .string(domainName)]).compactJSON
                    export.domainArgs[domain] = args
                }
            }
            return ProfileEvent(
                kind: .annotation, name: name, category: category, start: start, duration: end - start,
                pid: lane.process, tid: lane.thread, index: 0, args: args)
        }
    }
}
