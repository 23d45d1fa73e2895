/// An event as the timeline draws it: where it is, what it is, and where to find the rest.
package struct TimelineEvent: Hashable, Sendable {
    package var start: Int64
    package var duration: Int64
    /// Index into the profile's names.
    package var name: Int32
    package var kind: ProfileEventKind
    /// A stream's work by family; nil for host events.
    package var family: KernelFamily?
    /// Its position in its file, for the details line and a stable order among equal starts.
    package var index: Int

    package var end: Int64 { start + duration }

    package init(
        start: Int64, duration: Int64, name: Int32, kind: ProfileEventKind, family: KernelFamily?, index: Int
    ) {
        self.start = start
        self.duration = duration
        self.name = name
        self.kind = kind
        self.family = family
        self.index = index
    }

    /// What colours it: its family (0…) for stream work, `100 + kind` on the host.
    package var shade: UInt8 { family.map { UInt8($0.rawValue) } ?? 100 + kind.rawValue }

    /// Time order, the file's order among equal starts.
    package static func precedes(_ a: TimelineEvent, _ b: TimelineEvent) -> Bool {
        (a.start, a.index) < (b.start, b.index)
    }
}

/// One equal slice of a lane's time: how much of it the lane was busy, what ran most of it, and
/// how many events started in it.
package struct TimelineBin: Hashable, Sendable {
    /// Busy time over the slice's length, in 65535ths (nested or overlapping events count
    /// once each, capped at the whole slice).
    package var busy: UInt16
    /// The shade (`TimelineEvent.shade`) of the event that covered most of the slice.
    package var shade: UInt8
    package var count: UInt32

    package init(busy: UInt16, shade: UInt8, count: UInt32) {
        self.busy = busy
        self.shade = shade
        self.count = count
    }

    package var isEmpty: Bool { count == 0 && busy == 0 }
}

/// One lane of a profile's timeline (a GPU stream or a host thread of one rank) summarised so the
/// whole profile draws without reading its events: the profile's span in equal bins, and the few
/// events longer than a bin, which a read of one window's events would otherwise have to look
/// back for. Built once at import, a level of detail as trace viewers keep one: the timeline
/// reads events only for a window narrow enough to hold a screenful.
package struct TimelineLane: Hashable, Sendable {
    package var rank: Int
    /// The stream, or the host thread.
    package var tid: Int64
    /// The process (the device for a stream) of the lane's first event.
    package var pid: Int64
    package var isGPU: Bool
    package var events: Int
    /// The span the bins divide: the whole profile's, the same for every lane.
    package var start: Int64
    package var end: Int64
    package var bins: [TimelineBin]
    /// Events longer than a bin, in time order.
    package var long: [TimelineEvent]

    package init(
        rank: Int, tid: Int64, pid: Int64, isGPU: Bool, events: Int, start: Int64, end: Int64, bins: [TimelineBin],
        long: [TimelineEvent]
    ) {
        self.rank = rank
        self.tid = tid
        self.pid = pid
        self.isGPU = isGPU
        self.events = events
        self.start = start
        self.end = end
        self.bins = bins
        self.long = long
    }

    /// The length of a bin (ns, fractional).
    package var binWidth: Double { Double(max(1, end - start)) / Double(max(1, bins.count)) }

    /// The bins `window` touches.
    package func binRange(_ window: ClosedRange<Int64>) -> Range<Int> {
        guard !bins.isEmpty, window.upperBound >= start, window.lowerBound <= end else { return 0..<0 }
        let low = Int(Double(max(0, window.lowerBound - start)) / binWidth)
        let high = Int((Double(window.upperBound - start) / binWidth).rounded(.up))
        return min(low, bins.count - 1)..<min(bins.count, max(low + 1, high))
    }

    /// About how many of the lane's events a read of `window` returns: those starting in the
    /// bins it touches, and the long ones.
    package func estimatedEvents(in window: ClosedRange<Int64>) -> Int {
        binRange(window).reduce(long.count) { $0 + Int(bins[$1].count) }
    }

    /// How far before a window an event that reaches into it can start, besides the long ones.
    package var lookBack: Int64 { Int64(binWidth.rounded(.up)) }

    /// Which events a lane draws: a stream's work, and on the host the launch calls, operators
    /// and annotations (`ProfilerStep#…`); Python frames and counters stay off the timeline.
    package static func isDrawn(_ kind: ProfileEventKind) -> Bool {
        kind.isStreamWork || kind == .runtime || kind == .cpuOp || kind == .annotation
    }
}

/// Collects a profile's timeline events lane by lane as they are read, then sums them into
/// lanes: the busiest host threads of each rank (after its GPU streams) make the cut.
package struct TimelineBuilder: Sendable {
    private struct Key: Hashable {
        var rank: Int
        var tid: Int64
        var isGPU: Bool
    }

    private var lanes: [Key: (pid: Int64, events: [TimelineEvent])] = [:]

    package init() {}

    /// Adds `event` of `rank` when a lane draws it (its family is worked out at the end, when
    /// the names are all known).
    package mutating func add(_ event: ProfileEvent, rank: Int) {
        guard TimelineLane.isDrawn(event.kind) else { return }
        let gpu = event.kind.isStreamWork
        let key = Key(rank: rank, tid: event.tid, isGPU: gpu)
        let compact = TimelineEvent(
            start: event.start, duration: max(0, event.duration), name: event.name, kind: event.kind,
            family: nil, index: event.index)
        if lanes[key] == nil { lanes[key] = (event.pid, []) }
        lanes[key]!.events.append(compact)
    }

    /// Renumbers ranks (`from` → `to`), as the import does once every file's rank is known.
    package mutating func renumberRanks(_ map: [Int: Int]) {
        lanes = Dictionary(
            uniqueKeysWithValues: lanes.map { key, value in
                (Key(rank: map[key.rank] ?? key.rank, tid: key.tid, isGPU: key.isGPU), value)
            })
    }

    /// The lanes, each rank's GPU streams by number and then its `hostThreads` busiest host
    /// threads, their bins dividing the span of every lane's events.
    package func lanes(names: ProfileNames, bins count: Int = 8192, hostThreads: Int = 4) -> [TimelineLane] {
        var start = Int64.max
        var end = Int64.min
        for (_, events) in lanes.values {
            for event in events {
                start = min(start, event.start)
                end = max(end, event.end)
            }
        }
        guard start <= end else { return [] }
        var out: [TimelineLane] = []
        for rank in Set(lanes.keys.map(\.rank)).sorted() {
            let streams = lanes.keys.filter { $0.rank == rank && $0.isGPU }.sorted { $0.tid < $1.tid }
            let threads = lanes.keys.filter { $0.rank == rank && !$0.isGPU }
                .sorted { (lanes[$0]!.events.count, $1.tid) > (lanes[$1]!.events.count, $0.tid) }
                .prefix(hostThreads)
            for key in streams + threads {
                let (pid, events) = lanes[key]!
                out.append(
                    Self.lane(
                        rank: rank, tid: key.tid, pid: pid, isGPU: key.isGPU, events: events, names: names,
                        start: start, end: max(end, start + 1), bins: count))
            }
        }
        return out
    }

    /// Sums `events` into `count` bins over `start..<end`.
    static func lane(
        rank: Int, tid: Int64, pid: Int64, isGPU: Bool, events: [TimelineEvent], names: ProfileNames, start: Int64,
        end: Int64, bins count: Int
    ) -> TimelineLane {
        let width = Double(end - start) / Double(count)
        var covered = [Double](repeating: 0, count: count)
        var best = [Double](repeating: 0, count: count)
        var shades = [UInt8](repeating: 0, count: count)
        var counts = [UInt32](repeating: 0, count: count)
        var long: [TimelineEvent] = []
        for var event in events {
            if isGPU { event.family = names.family(name: event.name, kind: event.kind) }
            let a = Double(event.start - start)
            let b = Double(event.end - start)
            var bin = min(count - 1, max(0, Int(a / width)))
            counts[bin] &+= 1
            if Double(event.duration) > width { long.append(event) }
            let shade = event.shade
            while bin < count {
                let low = Double(bin) * width
                let high = low + width
                // An instant still marks its bin.
                let part = max(event.duration == 0 ? 1 : 0, min(b, high) - max(a, low))
                covered[bin] += part
                if part > best[bin] {
                    best[bin] = part
                    shades[bin] = shade
                }
                if b <= high { break }
                bin += 1
            }
        }
        let bins = (0..<count).map { i in
            TimelineBin(
                busy: UInt16(min(1, covered[i] / width) * 65535), shade: best[i] > 0 ? shades[i] : 0, count: counts[i])
        }
        return TimelineLane(
            rank: rank, tid: tid, pid: pid, isGPU: isGPU, events: events.count, start: start, end: end, bins: bins,
            long: long.sorted(by: TimelineEvent.precedes))
    }
}

// MARK: Stored form

extension TimelineLane {
    private static let binBytes = 7
    private static let eventBytes = 30

    /// The bins as stored: per bin its busy fraction (UInt16), shade (UInt8) and count (UInt32),
    /// little-endian.
    package var encodedBins: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bins.count * Self.binBytes)
        for bin in bins {
            Self.append(bin.busy, to: &out)
            out.append(bin.shade)
            Self.append(bin.count, to: &out)
        }
        return out
    }

    /// The long events as stored: start, duration (Int64), name (Int32), kind, family (255:
    /// none) and index (Int64), little-endian.
    package var encodedLong: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(long.count * Self.eventBytes)
        for event in long {
            Self.append(event.start, to: &out)
            Self.append(event.duration, to: &out)
            Self.append(event.name, to: &out)
            out.append(event.kind.rawValue)
            out.append(event.family.map { UInt8($0.rawValue) } ?? 255)
            Self.append(Int64(event.index), to: &out)
        }
        return out
    }

    /// The bins and long events from their stored bytes; nil when the bytes are not such a
    /// summary (a lane then is built again from the events).
    package static func decode(bins: [UInt8], long: [UInt8]) -> (bins: [TimelineBin], long: [TimelineEvent])? {
        guard bins.count % binBytes == 0, long.count % eventBytes == 0 else { return nil }
        var decodedBins: [TimelineBin] = []
        decodedBins.reserveCapacity(bins.count / binBytes)
        var decodedLong: [TimelineEvent] = []
        decodedLong.reserveCapacity(long.count / eventBytes)
        var ok = true
        bins.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: binBytes) {
                decodedBins.append(
                    TimelineBin(
                        busy: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self)),
                        shade: raw[offset + 2],
                        count: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 3, as: UInt32.self))))
            }
        }
        long.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: eventBytes) {
                guard let kind = ProfileEventKind(rawValue: raw[offset + 20]) else {
                    ok = false
                    return
                }
                let family = raw[offset + 21]
                decodedLong.append(
                    TimelineEvent(
                        start: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self)),
                        duration: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self)),
                        name: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 16, as: Int32.self)),
                        kind: kind, family: family == 255 ? nil : KernelFamily(rawValue: Int(family)) ?? .other,
                        index: Int(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 22, as: Int64.self)))
                    ))
            }
        }
        return ok ? (decodedBins, decodedLong) : nil
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }
}
