import GRDB
import LoupeBase

/// One Nsight Systems export being read: the tables it has, the names looked up in its
/// `StringIds` so far, the lanes that have events, and the events not yet handed on.
struct NsysExport {
    let db: Database
    let path: String
    /// The file's tables, by name.
    let tables: Set<String>
    var names = ProfileNames()
    var info: KinetoFileInfo
    /// Labels of `copyKind` and of `srcKind`/`dstKind`/`memKind`: the export's ENUM tables
    /// when it has them (2023 and later), CUPTI's fixed values otherwise.
    let copyKinds: [Int64: String]
    let memoryKinds: [Int64: String]
    /// NVTX domain names by `domainId`, from the export's domain-create rows.
    let nvtxDomains: [Int64: String]
    /// Names interned by StringIds id or by enum values, per use.
    var kernelNames: [Int64: Int32] = [:]
    var callNames: [Int64: Int32] = [:]
    var rangeNames: [Int64: Int32] = [:]
    var copyNames: [[Int64?]: Int32] = [:]
    var memsetNames: [Int64?: Int32] = [:]
    var syncNames: [Int64?: Int32] = [:]
    var domainArgs: [Int64: String] = [:]
    /// Host processes and threads with events, GPU devices and streams with events, and the
    /// names NVTX gave threads: what `readNames` names.
    var processes: Set<Int64> = []
    var threads: Set<Lane> = []
    var streams: Set<Lane> = []
    var nvtxThreadNames: [Lane: String] = [:]
    private let lookup: Statement
    private var batch: [ProfileEvent] = []
    private var rowsRead = 0
    private var rowsTotal = 0

    /// A process and one of its threads, or a device and one of its streams.
    struct Lane: Hashable {
        var process: Int64
        var thread: Int64
    }

    /// The tables read, in the order their events are numbered.
    static let eventTables = [
        "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
    ]

    init(_ db: Database, path: String) throws {
        self.db = db
        self.path = path
        info = KinetoFileInfo(path: path)
        tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        let present = Self.eventTables.filter(tables.contains)
        guard tables.contains("StringIds") else {
            if present.isEmpty {
                throw ProfileReadError(
                    file: path,
                    message: "this SQLite file is no Nsight Systems export: it has no StringIds table and no "
                        + "CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table")
            }
            throw ProfileReadError(
                file: path,
                message: "this Nsight Systems export has \(present.joined(separator: ", ")) but no StringIds "
                    + "table, where their names are: export it again with nsys export --type sqlite")
        }
        lookup = try db.makeStatement(sql: "SELECT value FROM StringIds WHERE id = ?")
        copyKinds = try Self.enumLabels(db, tables, "ENUM_CUDA_MEMCPY_OPER", copyKind: true) ?? Self.cuptiCopyKinds
        memoryKinds = try Self.enumLabels(db, tables, "ENUM_CUDA_MEM_KIND", copyKind: false) ?? Self.cuptiMemoryKinds
        nvtxDomains = try Self.domains(db, tables)
    }

    /// Reads every event table, then the names of the lanes that had events and the GPUs.
    mutating func read(
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void
    ) throws -> KinetoFileInfo {
        for table in Self.eventTables where tables.contains(table) {
            rowsTotal += try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
        }
        try readKernels(progress: progress, events: events)
        try readCopies(progress: progress, events: events)
        try readMemsets(progress: progress, events: events)
        try readSyncs(progress: progress, events: events)
        try readCalls(progress: progress, events: events)
        try readRanges(progress: progress, events: events)
        if !batch.isEmpty { try events(batch) }
        batch = []
        try countUnreadTables()
        try readNames()
        try readDevices()
        if tables.contains("TARGET_INFO_SESSION_START_TIME") {
            info.baseTimeNanoseconds = Self.integer(
                try DatabaseValue.fetchOne(db, sql: "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")
                    ?? .null)
        }
        progress(1)
        return info
    }

    // MARK: Rows

    /// Each row of `table` in start order (row id breaking ties), its columns those of
    /// `Column` in order; a column the table lacks reads as NULL unless it is `required`.
    /// What `make` returns is numbered, counted and handed on in batches; nil is passed over.
    mutating func scan<Column: NsysColumn>(
        _ table: String, _: Column.Type, required: [Column],
        progress: (_ fraction: Double) -> Void, events: ([ProfileEvent]) throws -> Void,
        _ make: (inout NsysExport, NsysRow<Column>) throws -> ProfileEvent?
    ) throws {
        guard tables.contains(table) else { return }
        let present = Set(try db.columns(in: table).map(\.name))
        if let missing = required.first(where: { !present.contains("\($0)") }) {
            throw ProfileReadError(file: path, message: "\(table) has no column \(missing)")
        }
        let selected = Column.allCases.map { present.contains("\($0)") ? "\"\($0)\"" : "NULL" }
        let sql = "SELECT rowid, \(selected.joined(separator: ", ")) FROM \(table) ORDER BY start, rowid"
        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            rowsRead += 1
            guard var event = try make(&self, NsysRow(row: row, table: table, path: path)) else { continue }
            event.index = info.events
            info.events += 1
            info.start = min(info.start, event.start)
            info.end = max(info.end, event.end)
            batch.append(event)
            if batch.count >= NsysReader.batchSize {
                try events(batch)
                batch.removeAll(keepingCapacity: true)
                progress(Double(rowsRead) / Double(max(rowsTotal, 1)))
            }
        }
        progress(Double(rowsRead) / Double(max(rowsTotal, 1)))
    }

    /// The string `id` names in StringIds; a missing one is an error at `row`'s `column`.
    func string<Column: NsysColumn>(_ id: Int64, for row: NsysRow<Column>, _ column: Column) throws -> String {
        switch try DatabaseValue.fetchOne(lookup, arguments: [id])?.storage {
        case .string(let text): return text
        case .int64(let number): return String(number)
        default: throw row.failure("its \(column) \(id) is not in StringIds")
        }
    }

    /// Rows of timed events in tables no event is read from (OS runtime calls, OpenACC,
    /// unified-memory faults…), counted as passed over so the import says what it left.
    private mutating func countUnreadTables() throws {
        let read = Set(Self.eventTables)
        for table in tables.sorted() where !read.contains(table) && !table.hasPrefix("sqlite_") {
            let columns = Set(try db.columns(in: table).map(\.name))
            guard columns.contains("start"), columns.contains("end") else { continue }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\(table)\"") ?? 0
            if count > 0 { info.passedOver["\(table) row", default: 0] += count }
        }
    }

    // MARK: Names

    /// Names the processes and threads that have events (PROCESSES, ThreadNames, then NVTX's
    /// thread names), and each GPU and stream as Kineto does (`GPU 0`, `stream 7`).
    private mutating func readNames() throws {
        if tables.contains("PROCESSES") {
            let columns = Set(try db.columns(in: "PROCESSES").map(\.name))
            if columns.contains("name"), columns.contains("globalPid") || columns.contains("pid") {
                let pid = columns.contains("globalPid") ? "(globalPid >> 24) & 16777215" : "pid"
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT \(pid), name FROM PROCESSES WHERE name IS NOT NULL ORDER BY rowid")
                while let row = try rows.next() {
                    guard let process = Self.integer(row[0]), processes.contains(process),
                        case .string(let name) = (row[1] as DatabaseValue).storage
                    else { continue }
                    info.processNames[process] = name
                }
            }
        }
        let threadColumns = tables.contains("ThreadNames") ? Set(try db.columns(in: "ThreadNames").map(\.name)) : []
        if threadColumns.contains("globalTid"), threadColumns.contains("nameId") {
            // Of a thread's names, the one of highest priority, then the last.
            let order = threadColumns.contains("priority") ? "t.priority, t.rowid" : "t.rowid"
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId
                    WHERE t.globalTid IS NOT NULL ORDER BY \(order)
                    """)
            while let row = try rows.next() {
                guard let id = Self.integer(row[0]), case .string(let name) = (row[1] as DatabaseValue).storage else {
                    continue
                }
                let lane = Lane(process: Self.process(ofGlobalID: id), thread: Self.thread(ofGlobalID: id))
                if threads.contains(lane) { info.threadNames["\(lane.process)/\(lane.thread)"] = name }
            }
        }
        for (lane, name) in nvtxThreadNames where threads.contains(lane) {
            let key = "\(lane.process)/\(lane.thread)"
            if info.threadNames[key] == nil { info.threadNames[key] = name }
        }
        for lane in streams {
            let key = "\(lane.process)/\(lane.thread)"
            if info.threadNames[key] == nil { info.threadNames[key] = "stream \(lane.thread)" }
            // A host process with the device's number keeps its own name.
            if !processes.contains(lane.process) { info.processNames[lane.process] = "GPU \(lane.process)" }
        }
    }

    /// TARGET_INFO_GPU as `deviceProperties`: one object per GPU under Kineto's key names
    /// where CUDA has one (`numSms`, `totalGlobalMem`…), nsys's otherwise. `id` is the
    /// device id events carry; `cudaDevice` the CUDA ordinal, which may differ.
    private mutating func readDevices() throws {
        guard tables.contains("TARGET_INFO_GPU") else { return }
        let present = Set(try db.columns(in: "TARGET_INFO_GPU").map(\.name))
        let keys: [(column: String, key: String)] = [
            (present.contains("id") ? "id" : "deviceId", "id"), ("name", "name"), ("chipName", "chipName"),
            ("cuDevice", "cudaDevice"), ("busLocation", "busLocation"), ("uuid", "uuid"),
            ("computeMajor", "computeMajor"), ("computeMinor", "computeMinor"), ("smCount", "numSms"),
            ("totalMemory", "totalGlobalMem"), ("clockRate", "clockRateHz"), ("l2CacheSize", "l2CacheSize"),
            ("maxThreadsPerBlock", "maxThreadsPerBlock"), ("threadsPerWarp", "warpSize"),
            ("maxRegistersPerBlock", "regsPerBlock"), ("maxRegistersPerSm", "regsPerMultiprocessor"),
            ("maxShmemPerBlock", "sharedMemPerBlock"), ("maxShmemPerBlockOptin", "sharedMemPerBlockOptin"),
            ("maxShmemPerSm", "sharedMemPerMultiprocessor"),
        ].filter { present.contains($0.column) }
        guard keys.first?.key == "id" else { return }
        let sql = "SELECT \(keys.map { "\"\($0.column)\"" }.joined(separator: ", ")) FROM TARGET_INFO_GPU ORDER BY 1"
        var devices: [JSONValue] = []
        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            var object: [String: JSONValue] = [:]
            for (index, key) in keys.enumerated() {
                switch (row[index] as DatabaseValue).storage {
                case .int64(let number): object[key.key] = .number(Double(number))
                case .double(let number): object[key.key] = .number(number)
                case .string(let text): object[key.key] = .string(text)
                case .null, .blob: break
                }
            }
            devices.append(.object(object))
        }
        if !devices.isEmpty { info.deviceProperties = JSONValue.array(devices).compactJSON }
    }

    // MARK: Export tables

    /// The labels of an ENUM table, nil when the export has none: memory kinds by their
    /// `label` (`Pageable`, `Device Static`), copy kinds by Kineto's short form of their `name`
    /// (`CUDA_MEMCPY_KIND_HTOD` is `HtoD`, `CUDA_MEMCPY_KIND_UVM_DTOH` `UVM DtoH`).
    private static func enumLabels(
        _ db: Database, _ tables: Set<String>, _ table: String, copyKind: Bool
    ) throws -> [Int64: String]? {
        guard tables.contains(table) else { return nil }
        let present = Set(try db.columns(in: table).map(\.name))
        guard present.contains("id"), present.contains(copyKind ? "name" : "label") else { return nil }
        var labels: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, \(copyKind ? "name" : "label") FROM \(table)") {
            guard let id = Self.integer(row[0]), case .string(let text) = (row[1] as DatabaseValue).storage else {
                continue
            }
            labels[id] = copyKind ? shortCopyKind(text) : text
        }
        return labels.isEmpty ? nil : labels
    }

    /// `CUDA_MEMCPY_KIND_HTOD` as Kineto writes it, `HtoD`.
    static func shortCopyKind(_ name: String) -> String {
        let prefix = "CUDA_MEMCPY_KIND_"
        guard name.hasPrefix(prefix) else { return name }
        return name.dropFirst(prefix.count).split(separator: "_").map { part in
            let letters = Array(part)
            if letters.count == 4, letters[1] == "T", letters[2] == "O" { return "\(letters[0])to\(letters[3])" }
            return part == "UNKNOWN" ? "Unknown" : String(part)
        }
        .joined(separator: " ")
    }

    /// CUPTI's copy kinds and nsys's memory kinds, for exports without ENUM tables (2021–2022;
    /// the values are the same in every export that has them).
    static let cuptiCopyKinds: [Int64: String] = [
        0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
        9: "HtoH", 10: "PtoP", 11: "UVM HtoD", 12: "UVM DtoH", 13: "UVM DtoD",
    ]
    static let cuptiMemoryKinds: [Int64: String] = [
        0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
        6: "Managed Static", 7: "Unknown",
    ]

    /// NVTX domain names by id, from the domain-create rows (event type 75).
    private static func domains(_ db: Database, _ tables: Set<String>) throws -> [Int64: String] {
        guard tables.contains("NVTX_EVENTS") else { return [:] }
        let present = Set(try db.columns(in: "NVTX_EVENTS").map(\.name))
        guard present.contains("domainId"), present.contains("eventType"), present.contains("text") else {
            return [:]
        }
        let text =
            present.contains("textId")
            ? "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))" : "text"
        var domains: [Int64: String] = [:]
        let sql = "SELECT domainId, \(text) FROM NVTX_EVENTS WHERE eventType = 75 ORDER BY rowid"
        for row in try Row.fetchAll(db, sql: sql) {
            guard let id = Self.integer(row[0]), case .string(let name) = (row[1] as DatabaseValue).storage else {
                continue
            }
            domains[id] = name
        }
        return domains
    }

    /// A value's integer; nil for NULL or anything that is not a whole number (GRDB's typed
    /// reads stop the program on a value of the wrong type, and a foreign file may hold any).
    static func integer(_ value: DatabaseValue) -> Int64? {
        switch value.storage {
        case .int64(let value): value
        case .double(let value): Int64(exactly: value)
        case .null, .string, .blob: nil
        }
    }

    // MARK: Serialized ids

    /// The process of a serialized id: nsys packs `globalTid` as `vm << 48 | pid << 24 | tid`,
    /// and `globalPid` the same with tid 0.
    static func process(ofGlobalID id: Int64) -> Int64 { (id >> 24) & 0xFF_FFFF }

    static func thread(ofGlobalID id: Int64) -> Int64 { id & 0xFF_FFFF }

    /// `correlationId` made unique across processes, as both a launch and its GPU work carry
    /// it; 0 (no link) when the row has none.
    static func correlation(_ id: Int64?, process: Int64) -> Int64 {
        guard let id, id != 0 else { return 0 }
        return process << 32 | (id & 0xFFFF_FFFF)
    }
}

/// The columns read from one export table, in SELECT order: each case is named as its
/// column is.
protocol NsysColumn: CaseIterable, Sendable {
    var rawValue: Int { get }
}

/// One row of an export table, its columns those of `Column` after the row id.
struct NsysRow<Column: NsysColumn> {
    let row: Row
    let table: String
    let path: String

    var rowid: Int64 { integer(at: 0) ?? 0 }

    /// The column's integer; nil for NULL or anything that is not a whole number.
    func integer(_ column: Column) -> Int64? { integer(at: column.rawValue + 1) }

    func text(_ column: Column) -> String? {
        if case .string(let text) = (row[column.rawValue + 1] as DatabaseValue).storage { return text }
        return nil
    }

    /// The column's integer, which this row must have.
    func required(_ column: Column) throws -> Int64 {
        guard let value = integer(column) else { throw failure("its \(column) is NULL or not an integer") }
        return value
    }

    /// The row's `start` and `end`, which it must have, end no earlier than start.
    func interval(start: Column, end: Column) throws -> (start: Int64, end: Int64) {
        let from = try required(start)
        let to = try required(end)
        guard to >= from else { throw failure("it ends (\(to) ns) before it starts (\(from) ns)") }
        return (from, to)
    }

    func failure(_ message: String) -> ProfileReadError {
        ProfileReadError(file: path, message: "\(table) row \(rowid): \(message)")
    }

    private func integer(at index: Int) -> Int64? { NsysExport.integer(row[index]) }
}
