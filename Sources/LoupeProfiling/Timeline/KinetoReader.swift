import Foundation
import LoupeBase

/// The names (event names, categories, string pids and tids) of one profile, each stored once.
package struct ProfileNames: Sendable {
    package private(set) var names: [String] = []
    private var index: [String: Int32] = [:]
    /// Each name's kernel type and family, worked out once per name: the analyses ask per event.
    private var types: [KernelType] = []
    private var families: [KernelFamily] = []

    package init() {}

    package init(_ names: [String]) {
        for name in names { _ = intern(name) }
    }

    package mutating func intern(_ name: String) -> Int32 {
        if let found = index[name] { return found }
        let id = Int32(names.count)
        names.append(name)
        index[name] = id
        types.append(KernelType(name: name))
        families.append(KernelFamily(name: name, kind: .kernel))
        return id
    }

    /// The kernel type of the event named `id` (HTA's classification, by name).
    package func type(_ id: Int32) -> KernelType { types.indices.contains(Int(id)) ? types[Int(id)] : .other }

    /// The family of `event`: copies, memsets and syncs by their kind, kernels by their name.
    package func family(_ event: ProfileEvent) -> KernelFamily { family(name: event.name, kind: event.kind) }

    /// The family of an event of `kind` named `name`.
    package func family(name: Int32, kind: ProfileEventKind) -> KernelFamily {
        switch kind {
        case .memcpy, .memset: .memory
        case .sync: .sync
        default: families.indices.contains(Int(name)) ? families[Int(name)] : .other
        }
    }

    package subscript(_ id: Int32) -> String { names.indices.contains(Int(id)) ? names[Int(id)] : "" }

    package func id(of name: String) -> Int32? { index[name] }
}

/// What a Kineto trace file says about itself besides its events.
package struct KinetoFileInfo: Hashable, Sendable {
    package var path: String
    /// `distributedInfo.rank`, when the trace is one rank of a distributed job.
    package var rank: Int?
    package var worldSize: Int?
    /// `distributedInfo` and `deviceProperties` as written (JSON).
    package var distributedInfo: String?
    package var deviceProperties: String?
    package var baseTimeNanoseconds: Int64?
    package var displayTimeUnit: String?
    /// Events kept, and those passed over by why (`flow`, `metadata`, `unknown ph "q"`…).
    package var events = 0
    package var passedOver: [String: Int] = [:]
    /// `M` events' names for processes and threads: `process_name` / `thread_name`, keyed by
    /// pid and by "pid/tid".
    package var processNames: [Int64: String] = [:]
    package var threadNames: [String: String] = [:]
    /// The earliest start and latest end of the events kept (ns).
    package var start: Int64 = .max
    package var end: Int64 = .min

    package init(path: String) { self.path = path }
}

/// Reads a Kineto (PyTorch profiler) or other Chrome-trace JSON file, gzip or not, without
/// holding it whole: the top-level object is walked as it streams in, `traceEvents` a block at a
/// time, and each block's events are parsed on every core. Events reach `events` in batches, in
/// file order; `B`/`E` pairs become one event at the `B`'s position.
package enum KinetoReader {
    package static func read(
        _ path: String, names: inout ProfileNames, chunkBytes: Int = 8 << 20,
        progress: (_ fraction: Double) -> Void = { _ in },
        events: ([ProfileEvent]) throws -> Void
    ) throws -> KinetoFileInfo {
        let file: ChunkedFile
        do { file = try ChunkedFile(path: path, chunkBytes: chunkBytes) } catch { throw error }
        var walker = Walker(file: file, path: path)
        var info = KinetoFileInfo(path: path)
        var open: [String: [(event: ProfileEvent, index: Int)]] = [:]
        try walker.skipByteOrderMark()
        try walker.skipWhitespace()
        if walker.atEnd { throw walker.failure("the file is empty") }
        if walker.peek == UInt8(ascii: "[") {
            // The JSON Array Format: the whole document is the events.
            try walker.streamArray { batch in
                try deliver(batch, into: &info, names: &names, open: &open, events: events)
                progress(file.fraction)
            }
        } else {
            try walker.expect(UInt8(ascii: "{"), "the trace is no JSON object or array")
            var first = true
            var sawEvents = false
            while true {
                try walker.skipWhitespace()
                if walker.peek == UInt8(ascii: "}") { break }
                if !first { try walker.expect(UInt8(ascii: ","), "expected ',' or '}' after a member") }
                first = false
                let key = try walker.key()
                if key == "traceEvents" {
                    sawEvents = true
                    try walker.streamArray { batch in
                        try deliver(batch, into: &info, names: &names, open: &open, events: events)
                        progress(file.fraction)
                    }
                } else {
                    let value = try walker.value()
                    read(member: key, value, into: &info)
                }
            }
            // An object without the member is some other JSON (a config, a summary), not an
            // empty profile: storing it would hide the mistake.
            guard sawEvents else {
                throw ProfileReadError(
                    file: path,
                    message: "the JSON object has no traceEvents member, so it is not a Kineto or Chrome trace")
            }
        }
        let unclosed = open.values.reduce(0) { $0 + $1.count }
        if unclosed > 0 { info.passedOver["B without E", default: 0] += unclosed }
        progress(1)
        return info
    }

    /// A top-level member other than `traceEvents`.
    private static func read(member key: String, _ value: JSONValue, into info: inout KinetoFileInfo) {
        switch key {
        case "distributedInfo":
            info.distributedInfo = value.compactJSON
            info.rank = value["rank"]?.int.map(Int.init)
            info.worldSize = value["world_size"]?.int.map(Int.init)
        case "deviceProperties": info.deviceProperties = value.compactJSON
        case "baseTimeNanoseconds": info.baseTimeNanoseconds = value.int
        case "displayTimeUnit": info.displayTimeUnit = value.string
        default: break
        }
    }

    /// Interns a parsed batch's names, pairs `B` with `E`, and hands the events on.
    private static func deliver(
        _ batch: [Parsed], into info: inout KinetoFileInfo, names: inout ProfileNames,
        open: inout [String: [(event: ProfileEvent, index: Int)]], events: ([ProfileEvent]) throws -> Void
    ) throws {
        var out: [ProfileEvent] = []
        out.reserveCapacity(batch.count)
        func lane(_ id: Lane) -> Int64 {
            switch id {
            case .number(let value): value
            case .name(let name): -Int64(names.intern(name)) - 1
            }
        }
        for parsed in batch {
            switch parsed {
            case .passedOver(let why):
                info.passedOver[why, default: 0] += 1
            case .metadata(let name, let pid, let tid, let value):
                let pid = lane(pid)
                if name == "process_name" {
                    info.processNames[pid] = value
                } else if name == "thread_name", let tid {
                    info.threadNames["\(pid)/\(lane(tid))"] = value
                }
                info.passedOver["metadata", default: 0] += 1
            case .event(let raw):
                var event = ProfileEvent(
                    kind: raw.kind, name: names.intern(raw.name), category: names.intern(raw.category),
                    start: raw.start, duration: raw.duration, pid: lane(raw.pid), tid: lane(raw.tid),
                    correlation: raw.correlation, externalID: raw.externalID, index: raw.index, args: raw.args)
                switch raw.phase {
                case UInt8(ascii: "B"):
                    open["\(event.pid)/\(event.tid)", default: []].append((event, raw.index))
                    continue
                case UInt8(ascii: "E"):
                    let key = "\(event.pid)/\(event.tid)"
                    guard var begun = open[key]?.popLast()?.event else {
                        throw ProfileReadError(
                            file: info.path, event: raw.index, message: "an E event with no B open on its pid and tid")
                    }
                    guard event.start >= begun.start else {
                        throw ProfileReadError(
                            file: info.path, event: raw.index,
                            message: "this E event is earlier than its B (traceEvents[\(begun.index)])")
                    }
                    begun.duration = event.start - begun.start
                    if begun.args == nil { begun.args = event.args }
                    event = begun
                default: break
                }
                info.events += 1
                info.start = min(info.start, event.start)
                info.end = max(info.end, event.end)
                out.append(event)
            }
        }
        if !out.isEmpty { try events(out) }
    }

    /// A `pid` or `tid` as written: a number, or a name.
    enum Lane: Sendable {
        case number(Int64)
        case name(String)
    }

    /// An event as parsed from its bytes, before its names are interned.
    struct RawEvent: Sendable {
        var phase: UInt8
        var kind: ProfileEventKind
        var name: String
        var category: String
        var start: Int64
        var duration: Int64
        var pid: Lane
        var tid: Lane
        var correlation: Int64
        var externalID: Int64
        var index: Int
        var args: String?
    }

    enum Parsed: Sendable {
        case event(RawEvent)
        case metadata(name: String, pid: Lane, tid: Lane?, value: String)
        case passedOver(String)
    }

    /// The event at `range` of `bytes`, the `index`th of `traceEvents`.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, index: Int, file: String) throws -> Parsed {
        let scanner = JSONScanner(bytes)
        var phase: UInt8 = 0
        var name = ""
        var category = ""
        var ts: Int64?
        var dur: Int64?
        var pid: Lane = .number(0)
        var tid: Lane = .number(0)
        var args: Range<Int>?
        func lane(_ offset: Int) throws(JSONSyntaxError) -> (Lane, Int) {
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") {
                let (text, end) = try scanner.string(at: offset)
                return (Int64(text).map { .number($0) } ?? .name(text), end)
            }
            let (value, end) = try scanner.number(at: offset)
            return (.number(Int64(exactly: value.rounded()) ?? 0), end)
        }
        do throws(JSONSyntaxError) {
            let end = try scanner.forEachMember(of: 0) { key, offset throws(JSONSyntaxError) -> Int? in
                switch key {
                case "ph":
                    let (text, end) = try scanner.string(at: offset)
                    phase = text.utf8.count == 1 ? text.utf8.first! : UInt8(ascii: "?")
                    return end
                case "name":
                    guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { return nil }
                    let (text, end) = try scanner.string(at: offset)
                    name = text
                    return end
                case "cat":
                    guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { return nil }
                    let (text, end) = try scanner.string(at: offset)
                    category = text
                    return end
                case "ts":
                    let (value, end) = try nanoseconds(scanner, at: offset)
                    ts = value
                    return end
                case "dur":
                    let (value, end) = try nanoseconds(scanner, at: offset)
                    dur = value
                    return end
                case "pid":
                    let (value, end) = try lane(offset)
                    pid = value
                    return end
                case "tid":
                    let (value, end) = try lane(offset)
                    tid = value
                    return end
                case "args":
                    let end = try scanner.skipValue(offset)
                    args = offset..<end
                    return end
                default: return nil
                }
            }
            guard scanner.skipWhitespace(end) == bytes.count else {
                throw scanner.error("more after the event's closing brace", end)
            }
        } catch {
            throw ProfileReadError(file: file, event: index, message: error.message)
        }
        func failure(_ message: String) -> ProfileReadError {
            ProfileReadError(file: file, event: index, message: message)
        }
        let argsValue: JSONValue?
        if let args {
            switch JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: bytes[args])) {
            case .success(let value): argsValue = value
            case .failure(let error): throw failure("its args are not valid JSON: \(error.message)")
            }
        } else {
            argsValue = nil
        }
        switch phase {
        case UInt8(ascii: "M"):
            guard let value = argsValue?["name"]?.string else { return .passedOver("metadata") }
            return .metadata(name: name, pid: pid, tid: tid, value: value)
        case UInt8(ascii: "s"), UInt8(ascii: "f"), UInt8(ascii: "t"):
            return .passedOver("flow")
        case UInt8(ascii: "X"), UInt8(ascii: "B"), UInt8(ascii: "E"), UInt8(ascii: "i"), UInt8(ascii: "I"),
            UInt8(ascii: "C"):
            break
        case 0:
            throw failure("the event has no ph (phase)")
        default:
            return .passedOver("unknown ph \"\(Character(Unicode.Scalar(phase)))\"")
        }
        guard let ts else { throw failure("the \(Character(Unicode.Scalar(phase))) event has no ts") }
        var duration: Int64 = 0
        if phase == UInt8(ascii: "X") {
            guard let dur else { throw failure("the X event has no dur") }
            guard dur >= 0 else { throw failure("the X event's dur is negative (\(Double(dur) / 1000) µs)") }
            duration = dur
        }
        let kind = ProfileEventKind(category: category, phase: phase)
        let object = argsValue?.object
        func integer(_ keys: String...) -> Int64 {
            for key in keys { if let value = object?[key]?.int { return value } }
            return 0
        }
        if kind.isGPU, let stream = object?["stream"]?.int { tid = .number(stream) }
        return .event(
            RawEvent(
                phase: phase, kind: kind, name: name, category: category, start: ts, duration: duration,
                pid: pid, tid: tid, correlation: integer("correlation"),
                externalID: integer("External id", "external id"), index: index,
                args: args.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }))
    }

    /// A time in microseconds (Chrome-trace time; fractions are nanoseconds) as whole
    /// nanoseconds, read from its digits: epoch microseconds times 1000 pass 2^53, so going
    /// through a Double would lose up to a few hundred nanoseconds.
    static func nanoseconds(_ scanner: JSONScanner, at offset: Int) throws(JSONSyntaxError) -> (Int64, end: Int) {
        let bytes = scanner.bytes
        var i = offset
        let quoted = i < bytes.count && bytes[i] == UInt8(ascii: "\"")
        if quoted { i += 1 }
        let negative = i < bytes.count && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var whole: Int64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, digits < 18 {
            whole = whole * 10 + Int64(bytes[i] - 0x30)
            i += 1
            digits += 1
        }
        var fraction: Int64 = 0
        var places = 0
        var roundUp = false
        if digits > 0, i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                if places < 3 {
                    fraction = fraction * 10 + Int64(bytes[i] - 0x30)
                } else if places == 3 {
                    roundUp = bytes[i] >= 0x35  // the first digit past nanoseconds rounds
                }
                places += 1
                i += 1
            }
        }
        for _ in min(places, 3)..<3 { fraction *= 10 }
        if roundUp { fraction += 1 }
        let ends =
            i < bytes.count
            && (quoted
                ? bytes[i] == UInt8(ascii: "\"")
                : [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]))
        let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1000)
        if digits > 0, ends, !overflow, scaled <= Int64.max - 1000 {
            let value = scaled + fraction
            return (negative ? -value : value, quoted ? i + 1 : i)
        }
        // Exponents, very long numbers: through a Double.
        let (value, end) = try scanner.number(at: offset)
        guard let exact = Int64(exactly: (value * 1000).rounded()) else {
            throw scanner.error("the time \(value) µs is out of range", offset)
        }
        return (exact, end)
    }
}

/// The file's bytes as they stream in, with what is still needed of them in `buffer`.
private struct Walker {
    let file: ChunkedFile
    let path: String
    var buffer: [UInt8] = []
    /// The next byte to read, in `buffer`.
    var position = 0
    /// Bytes dropped from the front of `buffer` so far.
    var dropped = 0
    var exhausted = false

    init(file: ChunkedFile, path: String) {
        self.file = file
        self.path = path
    }

    var atEnd: Bool { position >= buffer.count && exhausted }
    var peek: UInt8? { position < buffer.count ? buffer[position] : nil }

    func failure(_ message: String, at offset: Int? = nil, event: Int? = nil) -> ProfileReadError {
        ProfileReadError(file: path, event: event, byteOffset: dropped + (offset ?? position), message: message)
    }

    /// Reads the next chunk onto the end of `buffer`, first dropping what was read; false at
    /// the end of the file.
    mutating func fill() throws -> Bool {
        guard !exhausted else { return false }
        if position > 0 {
            buffer.removeSubrange(..<position)
            dropped += position
            position = 0
        }
        guard let chunk = try file.next() else {
            exhausted = true
            return false
        }
        buffer += chunk
        return true
    }

    /// Steps over a UTF-8 byte order mark at the start of the file (some Windows tools write one
    /// before the JSON).
    mutating func skipByteOrderMark() throws {
        while buffer.count - position < 3, try fill() {}
        if buffer[position...].starts(with: [0xEF, 0xBB, 0xBF]) { position += 3 }
    }

    mutating func skipWhitespace() throws {
        while true {
            position = buffer.withUnsafeBufferPointer { JSONScanner($0).skipWhitespace(position) }
            if position < buffer.count { return }
            if try !fill() { return }
        }
    }

    mutating func expect(_ byte: UInt8, _ message: String) throws {
        try skipWhitespace()
        guard peek == byte else { throw failure(message) }
        position += 1
    }

    /// Runs `scan` from `position` until what it needs has arrived: a scan that fails, or that
    /// ends at the end of the buffer (a number may go on), is run again with the next chunk.
    mutating func complete<T>(_ scan: (JSONScanner, Int) throws(JSONSyntaxError) -> (T, end: Int)) throws -> (
        T, end: Int
    ) {
        while true {
            let result = buffer.withUnsafeBufferPointer { bytes -> Result<(T, end: Int), JSONSyntaxError> in
                do throws(JSONSyntaxError) {
                    return .success(try scan(JSONScanner(bytes), position))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let found) where found.end < buffer.count || exhausted:
                return found
            case .success:
                _ = try fill()
            case .failure(let error):
                if try !fill() { throw failure(error.message) }
            }
        }
    }

    /// A member's name and the colon after it.
    mutating func key() throws -> String {
        try skipWhitespace()
        let (key, end) = try complete { scanner, offset throws(JSONSyntaxError) in try scanner.string(at: offset) }
        position = end
        try expect(UInt8(ascii: ":"), "expected ':' after \"\(key)\"")
        try skipWhitespace()
        return key
    }

    /// A (small) value, parsed.
    mutating func value() throws -> JSONValue {
        try skipWhitespace()
        let (range, end) = try complete { scanner, offset throws(JSONSyntaxError) in
            let end = try scanner.skipValue(offset)
            return (offset..<end, end)
        }
        let parsed = buffer.withUnsafeBufferPointer { JSONValue.parse(bytes: UnsafeBufferPointer(rebasing: $0[range])) }
        position = end
        switch parsed {
        case .success(let value): return value
        case .failure(let error): throw failure(error.message, at: range.lowerBound)
        }
    }

    /// The array at `position`, its elements parsed on every core a buffer's worth at a time.
    mutating func streamArray(_ batch: ([KinetoReader.Parsed]) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "traceEvents is not an array")
        var index = 0
        var pending: [Range<Int>] = []
        var done = false
        /// Parses the pending elements, which lie in the current buffer.
        func flush(_ walker: Walker, from firstIndex: Int) throws {
            guard !pending.isEmpty else { return }
            let path = walker.path
            let base = walker.dropped
            let parsed = try walker.buffer.withUnsafeBufferPointer { bytes in
                let all = UncheckedSendable(bytes)
                let ranges = Array(pending.enumerated())
                return try parallelMap(ranges, serialBelow: 256) { (slot, range) throws -> KinetoReader.Parsed in
                    do {
                        return try KinetoReader.parse(
                            UnsafeBufferPointer(rebasing: all.value[range]), index: firstIndex + slot, file: path)
                    } catch var error as ProfileReadError {
                        error.byteOffset = base + range.lowerBound
                        throw error
                    }
                }
            }
            pending.removeAll(keepingCapacity: true)
            try batch(parsed)
        }
        try skipWhitespace()
        if peek == UInt8(ascii: "]") {
            position += 1
            return
        }
        while !done {
            // The elements whole in the buffer; one cut by its end waits for the next chunk.
            let scanned = buffer.withUnsafeBufferPointer {
                bytes -> (ranges: [Range<Int>], next: Int, closed: Bool, error: (JSONSyntaxError, at: Int)?) in
                let scanner = JSONScanner(bytes)
                var ranges: [Range<Int>] = []
                var i = position
                while true {
                    let start = scanner.skipWhitespace(i)
                    let end: Int
                    do throws(JSONSyntaxError) { end = try scanner.skipValue(start) } catch {
                        return (ranges, i, false, (error, start))
                    }
                    let after = scanner.skipWhitespace(end)
                    guard after < bytes.count else {
                        return (ranges, i, false, (scanner.error("the array is not closed", after), after))
                    }
                    guard bytes[after] == UInt8(ascii: ",") || bytes[after] == UInt8(ascii: "]") else {
                        // The event is whole; what follows it is wrong.
                        ranges.append(start..<end)
                        return (
                            ranges, after, false, (scanner.error("expected ',' or ']' after an event", after), after)
                        )
                    }
                    ranges.append(start..<end)
                    i = after + 1
                    if bytes[after] == UInt8(ascii: "]") { return (ranges, i, true, nil) }
                }
            }
            let first = index
            pending += scanned.ranges
            index += scanned.ranges.count
            position = scanned.next
            try flush(self, from: first)
            if scanned.closed {
                done = true
            } else if let (error, offset) = scanned.error, !error.ranOut || exhausted {
                throw failure(
                    error.ranOut ? "the file ends inside traceEvents" : error.message, at: offset, event: index)
            } else if try !fill() {
                throw failure("the file ends inside traceEvents", event: index)
            }
        }
    }
}
