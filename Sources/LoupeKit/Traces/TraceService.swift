import Foundation
import LoupeAgents
import LoupeBase
import LoupeOTLP
import LoupeStore
import Synchronization

/// Imports trace files into the workspace and reads them back for `trace list|show` and the
/// Traces panel.
package struct TraceService: Sendable {
    /// The trace tables, on SQLite or PostgreSQL.
    package let tables: TraceTables

    package init(workspace: Workspace) { tables = TraceTables(workspace) }

    package init(tables: TraceTables) { self.tables = tables }

    /// What importing a batch of files did.
    package struct ImportReport: Hashable, Sendable {
        package var files = 0
        package var traces = 0
        package var spans = 0
        package var counts = TraceImportCounts()
    }

    /// Reads every file, then stores all their traces in one transaction: a malformed file
    /// stops the import before anything is written, naming the file, place and field.
    package func importFiles(_ paths: [String], reporter: JobReporter = .detached()) throws -> ImportReport {
        var report = ImportReport()
        var read: [ReadTrace] = []
        for (index, path) in paths.enumerated() {
            try reporter.checkCancellation()
            let name = (path as NSString).lastPathComponent
            reporter.report(JobProgress(completed: Double(index), total: Double(paths.count), detail: name))
            let traces = try Self.readTraces(path) { fraction in
                reporter.report(
                    JobProgress(completed: Double(index) + fraction, total: Double(paths.count), detail: name))
            } checkCancellation: {
                try reporter.checkCancellation()
            }
            report.files += 1
            report.traces += traces.count
            report.spans += traces.reduce(0) { $0 + $1.trace.spans.count }
            read += traces
        }
        // Rows are made on every core while the writer stores those already made. Every trace of
        // the import is stamped with one time: the list orders untimed traces by it, and each
        // core's clock would shuffle them.
        let importedAt = Date()
        let inspect = read.contains { $0.trace.format == .inspect }
        // Handed over: the stream lets each trace go once its rows are made.
        try reporter.checkCancellation()
        let records = ParallelOrderedStream(consume read) {
            Self.record($0.trace, sourceFile: $0.file, encoded: $0.encoded, importedAt: importedAt)
        }
        defer { records.cancel() }
        report.counts = try tables.importTraces(records)
        // Inspect logs are eval runs too: they become runs here, at import, so that reading the
        // runs (the Evals panel, `eval list`) never writes.
        if inspect {
            try EvalService(evals: EvalTables(tables.database)).syncInspectRuns()
        }
        return report
    }

    /// A span's content as the workspace stores it: its payload as JSON, and its source as
    /// written (JSON text or protobuf message bytes), compressed. Made apart from the trace it
    /// belongs to, so a receiver can make it on the request's own thread while one writer stores
    /// traces, and a file's reader as it parses each line; only the compressed source is kept.
    package struct EncodedSpan: Sendable {
        var payloadJSON: String
        var sourceZstd: Data?

        package init(_ span: TraceSpan) {
            payloadJSON = SpanPayload(span).json.compactJSON
            if let raw = span.raw?.compactJSON {
                sourceZstd = Zstd.compress(raw)
            } else if let message = span.rawProtobuf {
                sourceZstd = Zstd.compress(message)
            }
        }
    }

    /// A trace as the workspace stores it: totals on its row, each span's numbers in columns and
    /// its content as JSON, a hash of it all to tell a re-import of the same content.
    ///
    /// - Parameter encoded: spans already encoded, by span id; the others are encoded here.
    package static func record(
        _ trace: Trace, sourceFile: String?, parentTraceID: Int64? = nil, forkOrdinal: Int? = nil,
        encoded: [String: EncodedSpan] = [:], importedAt: Date = Date()
    ) -> NewTrace {
        var spans: [NewTrace.SpanRecord] = []
        spans.reserveCapacity(trace.spans.count)
        var hash = ContentHash()
        hash.add(trace.externalID)
        hash.add(trace.name)
        for (ordinal, span) in trace.spans.enumerated() {
            let row = SpanRow(
                ordinal: ordinal, spanID: span.spanID, parentSpanID: span.parentID, kind: span.kind.rawValue,
                name: span.name, startNs: span.startNs, endNs: span.endNs, status: span.status.code,
                statusMessage: span.status.message, model: span.model, inputTokens: span.usage.inputTokens,
                outputTokens: span.usage.outputTokens, cacheReadTokens: span.usage.cacheReadTokens,
                cacheWriteTokens: span.usage.cacheWriteTokens, reasoningTokens: span.usage.reasoningTokens,
                cost: span.usage.cost, toolName: span.tool?.name)
            let encoding = encoded[span.spanID] ?? EncodedSpan(span)
            hash.add("\(ordinal) \(span.spanID) \(span.startNs) \(span.endNs ?? -1) \(span.status)")
            hash.add(encoding.payloadJSON)
            // The source as written: a received span still holds its protobuf message, the bytes
            // its compressed form holds (``EncodedSpan``), so the receiver's writer does not
            // decompress each span to hash it; a span whose content was dropped once encoded
            // (a large file's lines) reads its compressed form back.
            if span.raw == nil, let message = span.rawProtobuf {
                hash.add(message)
            } else {
                hash.add(encoding.sourceZstd.flatMap(Zstd.decompress) ?? Data())
            }
            spans.append(
                NewTrace.SpanRecord(row: row, payloadJSON: encoding.payloadJSON, rawZstd: encoding.sourceZstd))
        }
        // A model call recorded again below it (an agent's generation span over the server's) is
        // counted once, as the store counts it (NestedModelCalls).
        let steps = trace.steps
        let usage = trace.usage
        let summary = TraceSummary(
            id: 0, externalID: trace.externalID, format: trace.format.rawValue, sourceFile: sourceFile,
            name: trace.name,
            startedNs: trace.startNs, endedNs: trace.endNs, timed: trace.timed, spanCount: trace.spans.count,
            stepCount: steps.count, errorCount: trace.errorCount, inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens, cost: usage.cost, parentTraceID: parentTraceID, forkOrdinal: forkOrdinal,
            importedAt: importedAt, sessionID: trace.sessionID, awaitingParents: trace.awaitingParents
        )
        let scores = trace.scores.map {
            NewTrace.ScoreRecord(
                scorer: $0.scorer, valueJSON: $0.value.compactJSON, answer: $0.answer, explanation: $0.explanation)
        }
        hash.add(JSONValue.object(trace.metadata).compactJSON)
        for score in scores {
            hash.add(score.scorer)
            hash.add(score.valueJSON)
        }
        return NewTrace(
            summary: summary, metadataJSON: JSONValue.object(trace.metadata).compactJSON,
            contentHash: hash.hex, spans: spans, scores: scores)
    }

    /// Every trace, its cost what the source recorded plus its priced model calls; nil ("no
    /// price") when some call has neither.
    package func list() throws -> [TraceSummary] {
        try priced(try tables.traceSummaries(), usage: try tables.modelUsage())
    }

    /// Every trace, priced, as ``list()`` gives it, reading only what changed since `kept` last
    /// read: the Traces panel reads the list again on every commit another process announces,
    /// and on 20,000 traces a whole read is a third of a second of the panel's time while a
    /// receiver streams spans in. Traces deleted since (fewer rows than kept) or prices changed
    /// mean a whole read or a whole repricing; nothing else does.
    package func list(keeping kept: KeptList) throws -> [TraceSummary] {
        try kept.state.withLock { state throws -> [TraceSummary] in
            let prices = try tables.modelPrices()
            var changes = try tables.traceChanges(since: state?.watermark)
            // Merged in place: a copy of the kept arrays would be most of the time of a read that
            // finds one trace changed among 20,000.
            if state != nil, state!.merge(changes, prices: prices) { return state!.priced }
            if state != nil {
                state = nil
                changes = try tables.traceChanges(since: nil)
            }
            state = KeptList.State(watermark: changes.watermark, prices: prices)
            _ = state!.merge(changes, prices: prices)
            return state!.priced
        }
    }

    /// The list ``list(keeping:)`` keeps between reads: one per reader (the Traces panel's port).
    package final class KeptList: Sendable {
        fileprivate let state = Mutex<State?>(nil)

        package init() {}

        /// Drops what is kept: the next read reads every trace.
        package func forget() { state.withLock { $0 = nil } }

        fileprivate struct State: Sendable {
            var watermark: TraceWatermark
            var prices: [ModelPrice]
            /// Traces in id order, as stored and as priced, and where each id is.
            var stored: [TraceSummary] = []
            var priced: [TraceSummary] = []
            var usage: [Int64: [ModelUsage]] = [:]
            var position: [Int64: Int] = [:]

            /// Takes in `changes`; false when they cannot be (traces were deleted): read them all.
            mutating func merge(_ changes: TraceChanges, prices newPrices: [ModelPrice]) -> Bool {
                var changedUsage: [Int64: [ModelUsage]] = [:]
                for row in changes.usage { changedUsage[row.trace, default: []].append(row) }
                let table = PriceTable(workspace: newPrices)
                // New prices reprice every trace below; until then the changed ones are priced here.
                let repricing = newPrices != prices
                var appended = false
                for trace in changes.traces {
                    usage[trace.id] = changedUsage[trace.id]
                    let cost =
                        repricing ? trace : TraceService.priced(trace, usage: usage[trace.id] ?? [], prices: table)
                    if let at = position[trace.id] {
                        stored[at] = trace
                        priced[at] = cost
                    } else {
                        appended = appended || (stored.last.map { $0.id > trace.id } ?? false)
                        position[trace.id] = stored.count
                        stored.append(trace)
                        priced.append(cost)
                    }
                }
                if appended {
                    // Ids are handed out in increasing order, so this is a trace inserted with
                    // an id of its own (a copy): keep id order.
                    let order = stored.indices.sorted { stored[$0].id < stored[$1].id }
                    stored = order.map { stored[$0] }
                    priced = order.map { priced[$0] }
                    position = Dictionary(uniqueKeysWithValues: stored.enumerated().map { ($1.id, $0) })
                }
                watermark = changes.watermark
                if repricing {
                    prices = newPrices
                    priced = stored.map { TraceService.priced($0, usage: usage[$0.id] ?? [], prices: table) }
                }
                return stored.count == changes.total
            }
        }
    }

    /// The first `limit` traces in import order, priced, and how many there are in all: the
    /// Traces panel's first view, shown while the whole list is read.
    package func list(first limit: Int) throws -> Page {
        // Read together so that the two agree; each is an index range scan however large the
        // workspace.
        let (traces, total) = try tables.firstTraceSummaries(limit)
        return Page(traces: try priced(traces, usage: try tables.modelUsage(ofFirst: limit)), total: total)
    }

    /// The start of the list and its length.
    package struct Page: Hashable, Sendable {
        package var traces: [TraceSummary]
        /// How many traces there are in all.
        package var total: Int

        package init(traces: [TraceSummary], total: Int) {
            self.traces = traces
            self.total = total
        }
    }

    /// `summaries` with their cost: what the source recorded plus their priced model calls.
    private func priced(_ summaries: [TraceSummary], usage: [ModelUsage]) throws -> [TraceSummary] {
        let prices = PriceTable(workspace: try tables.modelPrices())
        var byTrace: [Int64: [ModelUsage]] = [:]
        for row in usage { byTrace[row.trace, default: []].append(row) }
        return summaries.map { Self.priced($0, usage: byTrace[$0.id] ?? [], prices: prices) }
    }

    /// `summary` with its cost: what the source recorded plus its priced model calls (`usage`,
    /// this trace's); nil ("no price") when some call has neither a cost nor a price.
    private static func priced(_ summary: TraceSummary, usage: [ModelUsage], prices: PriceTable) -> TraceSummary {
        var cost: Double?? = nil
        // Calls with neither tokens nor a cost say nothing (a SWE-agent trace records only its
        // total, on the root): the recorded total stands for them.
        for usage in usage
        where usage.costed > 0 || usage.inputTokens != nil || usage.outputTokens != nil {
            let priced: Double? =
                usage.costed == usage.calls
                ? usage.cost
                : prices.cost(
                    model: usage.model, input: usage.inputTokens, output: usage.outputTokens,
                    cachedInput: usage.cacheReadTokens
                ).map { $0 + (usage.cost ?? 0) }
            let sofar = cost ?? 0
            cost = sofar.flatMap { a in priced.map { a + $0 } }
        }
        var summary = summary
        if let cost { summary.cost = cost }
        return summary
    }

    /// A stored trace: its row, span rows (no payloads) and the order its steps replay in.
    package struct Loaded: Hashable, Sendable {
        package var summary: TraceSummary
        package var spans: [SpanRow]
        /// Ordinals of the step spans, in replay order.
        package var steps: [Int]
        package var scores: [TraceScore]
        /// Each span's depth in the tree (0 for roots), by ordinal.
        package var depths: [Int]
    }

    package func load(_ id: Int64) throws -> Loaded {
        guard var summary = try tables.traceSummary(id: id) else {
            throw TraceImportError(file: "trace \(id)", "no such trace (loupe trace list shows them)")
        }
        let prices = PriceTable(workspace: try tables.modelPrices())
        var spans = try tables.spanRows(trace: id)
        var total: Double? = 0
        var measured = false
        // One pass of plain loops over the rows (a 50,000-span trace opens from here): each row
        // read in place, not copied into a closure's argument with its strings retained.
        var kinds: [(ordinal: Int, kind: SpanKind, startNs: Int64)] = []
        kinds.reserveCapacity(spans.count)
        var depths = [Int](repeating: 0, count: spans.count)
        var depthOf = SpanDepths(capacity: spans.count)
        // A model call recorded again below it counts once, as the stored summary counts it.
        let outer = NestedModelCalls.outer(
            ids: spans.map(\.spanID), parents: spans.map(\.parentSpanID), isModelCall: spans.map { $0.kind == "llm" },
            carriesUsage: spans.map {
                NestedModelCalls.carriesUsage(inputTokens: $0.inputTokens, outputTokens: $0.outputTokens, cost: $0.cost)
            })
        for i in spans.indices {
            let kind = SpanKind(rawValue: spans[i].kind) ?? .other
            kinds.append((spans[i].ordinal, kind, spans[i].startNs))
            if let parent = spans[i].parentSpanID, let depth = depthOf[parent] { depths[i] = depth + 1 }
            depthOf[spans[i].spanID] = depths[i]
            guard kind == .llm, !outer[i],
                spans[i].cost != nil || spans[i].inputTokens != nil || spans[i].outputTokens != nil
            else { continue }
            measured = true
            if spans[i].cost == nil {
                spans[i].cost = prices.cost(
                    model: spans[i].model, input: spans[i].inputTokens, output: spans[i].outputTokens,
                    cachedInput: spans[i].cacheReadTokens)
            }
            total = total.flatMap { a in spans[i].cost.map { a + $0 } }
        }
        if measured { summary.cost = total }
        let steps = TraceImport.steps(kinds, leaving: outer)
        return Loaded(
            summary: summary, spans: spans, steps: steps,
            scores: try tables.traceScores(trace: id).enumerated().map { TraceScore($1, trace: id, index: $0) },
            depths: depths)
    }

    /// A stored trace whole, payloads included, back in the trace model (for export). A stored
    /// value that does not read back stops it with a ``StoredValueError`` naming its row and
    /// column: an export missing a span's content would look complete.
    package func trace(_ id: Int64) throws -> Trace {
        let loaded = try load(id)
        let payloads = try tables.spanPayloads(trace: id)
        var spans: [TraceSpan] = []
        spans.reserveCapacity(loaded.spans.count)
        for (row, stored) in zip(loaded.spans, payloads) {
            var span = TraceSpan(
                spanID: row.spanID, parentID: row.parentSpanID, kind: SpanKind(rawValue: row.kind) ?? .other,
                name: row.name, startNs: row.startNs, endNs: row.endNs)
            span.status =
                row.status == "error" ? .error(row.statusMessage ?? "error") : row.status == "ok" ? .ok : .unset
            span.model = row.model
            span.usage = Usage(
                inputTokens: row.inputTokens, outputTokens: row.outputTokens, cacheReadTokens: row.cacheReadTokens,
                cacheWriteTokens: row.cacheWriteTokens, reasoningTokens: row.reasoningTokens, cost: row.cost)
            let detail = SpanDetail(stored: stored, trace: id, ordinal: row.ordinal)
            if let problem = detail.unreadable.first { throw problem }
            span.input = detail.payload.input
            span.output = detail.payload.output
            span.tool = detail.payload.tool
            span.attributes = detail.payload.attributes
            span.raw = detail.raw
            spans.append(span)
        }
        var trace = Trace(
            externalID: loaded.summary.externalID, format: TraceFormat(rawValue: loaded.summary.format) ?? .loupe,
            name: loaded.summary.name, spans: spans)
        trace.timed = loaded.summary.timed
        if let metadata = try tables.traceMetadata(trace: id) {
            let json = try JSONValue.parse(stored: metadata, "metadata", row: "trace \(id)", column: "metadata_json")
            // The workspace writes an object: anything else is damage, not a trace without metadata.
            guard let object = json.object else {
                throw StoredValueError(
                    "metadata", row: "trace \(id)", column: "metadata_json", reason: "not a JSON object")
            }
            trace.metadata = object
        }
        trace.scores = try loaded.scores.map {
            Score(scorer: $0.scorer, value: try $0.value.get(), answer: $0.answer, explanation: $0.explanation)
        }
        return trace
    }

    /// One span's content and its source as written. A stored column that does not read back
    /// throws its ``StoredValueError`` (the Traces panel reads ``SpanDetail`` instead, which
    /// shows it in place).
    package func payload(trace: Int64, ordinal: Int) throws -> (payload: SpanPayload, raw: JSONValue?) {
        let detail = try detail(trace: trace, ordinal: ordinal)
        if let problem = detail.unreadable.first { throw problem }
        return (detail.payload, detail.raw)
    }

    /// One span's content decoded, with the columns that did not read back.
    package func detail(trace: Int64, ordinal: Int) throws -> SpanDetail {
        guard let stored = try tables.spanPayload(trace: trace, ordinal: ordinal) else {
            throw TraceImportError(file: "trace \(trace)", part: "span \(ordinal)", "no such span")
        }
        return SpanDetail(stored: stored, trace: trace, ordinal: ordinal)
    }
}

/// Span id → depth for opening a trace: open addressing over FNV-1a of the id's bytes. A
/// `[String: Int]` spent most of the open of a 50,000-span trace hashing (Swift's seeded
/// SipHash, set up per key) and comparing ids. Ids are compared in full, as bytes (an id is a
/// token, not text to normalise), so a collision costs a probe, never a wrong depth; the last
/// depth given for an id wins, as a dictionary's would.
struct SpanDepths {
    private var keys: [String?]
    private var hashes: [Int]
    private var values: [Int]
    private let mask: Int

    init(capacity: Int) {
        var size = 16
        while size < 2 * capacity { size *= 2 }
        keys = Array(repeating: nil, count: size)
        hashes = Array(repeating: 0, count: size)
        values = Array(repeating: 0, count: size)
        mask = size - 1
    }

    /// FNV-1a over the id's bytes, read in place (an id is a native string: contiguous UTF-8).
    private static func hash(_ id: String) -> Int {
        func fnv(_ bytes: some Sequence<UInt8>) -> Int {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return Int(truncatingIfNeeded: hash ^ (hash >> 29))
        }
        return id.utf8.withContiguousStorageIfAvailable { fnv($0) } ?? fnv(id.utf8)
    }

    private static func same(_ a: String, _ b: String) -> Bool {
        let inPlace = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in
                a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
            }
        }
        return (inPlace ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// Where `id` is, or the empty slot it would take, and its hash.
    private func slot(_ id: String) -> (at: Int, hash: Int) {
        let hash = Self.hash(id)
        var at = hash & mask
        while let key = keys[at], hashes[at] != hash || !Self.same(key, id) { at = (at + 1) & mask }
        return (at, hash)
    }

    subscript(id: String) -> Int? {
        get {
            let at = slot(id).at
            return keys[at] == nil ? nil : values[at]
        }
        set {
            guard let newValue else { return }
            let (at, hash) = slot(id)
            keys[at] = id
            hashes[at] = hash
            values[at] = newValue
        }
    }
}

/// A 128-bit content fingerprint (two multiply-rotate lanes over the bytes eight at a time,
/// each field closed by its length), to tell a re-imported trace whose content is unchanged.
/// Not cryptographic: SHA-256 over every payload cost more than parsing them, and a byte-wise
/// FNV was still a twentieth of an import.
struct ContentHash {
    private var a: UInt64 = 0xCBF2_9CE4_8422_2325
    private var b: UInt64 = 0x6C62_272E_07BB_0142

    mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    mutating func add(_ data: Data) {
        data.withUnsafeBytes { add($0) }
    }

    private mutating func add(_ raw: UnsafeRawBufferPointer) {
        var (a, b) = (self.a, self.b)
        func mix(_ word: UInt64) {
            a = ((a ^ word) &* 0x9E37_79B9_7F4A_7C15).rotated(31)
            b = ((b ^ word) &* 0xC2B2_AE3D_27D4_EB4F).rotated(27) &+ a
        }
        var offset = 0
        while offset + 8 <= raw.count {
            mix(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        for (shift, byte) in raw[offset...].enumerated() { tail |= UInt64(byte) << (8 * UInt64(shift)) }
        mix(tail)
        mix(UInt64(raw.count))
        (self.a, self.b) = (a, b)
    }

    var hex: String { String(format: "%016llx%016llx", a, b) }
}

extension UInt64 {
    fileprivate func rotated(_ bits: UInt64) -> UInt64 { (self << bits) | (self >> (64 - bits)) }
}
