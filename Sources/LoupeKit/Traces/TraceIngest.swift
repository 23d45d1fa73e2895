import Foundation
import LoupeAgents
import LoupeBase
import LoupeOTLP
import LoupeStore
import Synchronization

/// The port a trace server hands what it received to (DESIGN.md §7). Requests wait in a bounded
/// queue; one writer thread takes everything queued, commits it in one transaction, and only then
/// answers each request, so an acknowledgement means the spans are in the workspace. A full queue
/// refuses at once (the server answers 503 with `Retry-After`, gRPC `UNAVAILABLE`) so exporters
/// back off instead of piling up memory.
///
/// Spans of one trace may come in any order and over many requests: the trace is put together
/// again from the spans already stored and the new ones, by span id, so a trace grows and a
/// request sent twice changes nothing.
package final class TraceIngest: Sendable {
    package enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// The queue holds `queued` spans, and this request's would pass `capacity`.
        case busy(queued: Int, capacity: Int)
        /// The ingest is draining before the process stops.
        case stopping
        /// The workspace could not commit; the spans were not stored.
        case notStored(String)

        package var description: String {
            switch self {
            case .busy(let queued, let capacity):
                "busy: \(queued) spans are waiting to be stored (the queue holds \(capacity)); retry later"
            case .stopping: "the receiver is stopping; retry against it once it is back"
            case .notStored(let why): "the spans were not stored: \(why)"
            }
        }
    }

    /// Totals since the ingest started, for a status bar and `loupe serve`'s log.
    package struct Statistics: Hashable, Sendable {
        package var requests = 0
        package var spans = 0
        package var refused = 0
        package var queued = 0
        /// Spans committed in the last few seconds, per second.
        package var spansPerSecond = 0.0
    }

    /// A received span with its stored form, made by the request that brought it.
    package struct Prepared: Sendable {
        var span: OTLPImporter.OTLPSpan
        var encoded: TraceService.EncodedSpan

        init(_ span: OTLPImporter.OTLPSpan) {
            self.span = span
            encoded = TraceService.EncodedSpan(span.span)
        }
    }

    private struct Pending {
        var spans: [Prepared]
        var source: String
        var answer: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var queued = 0
        var stopping = false
        var writing = false
        /// Requests being read and decoded (admitted, not yet queued).
        var decoding = 0
        var statistics = Statistics()
        /// (time, spans) of recent commits, for the rate.
        var recent: [(at: ContinuousClock.Instant, spans: Int)] = []
    }

    private let tables: TraceTables
    /// The most spans waiting at once.
    package let capacity: Int
    /// The most requests read and decoded at once: with the queue's capacity, what bounds memory
    /// whatever the number of connections.
    package let decoders: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)

    /// - Parameter capacity: the most spans waiting to be stored at once; a request that would
    ///   pass it is refused (unless the queue is empty: one request always fits, its size is
    ///   bounded by the server's body limit).
    package convenience init(workspace: Workspace, capacity: Int = 16_384, decoders: Int = 4) {
        self.init(tables: TraceTables(workspace), capacity: capacity, decoders: decoders)
    }

    /// An ingest into `tables`, on SQLite or PostgreSQL.
    package init(tables: TraceTables, capacity: Int = 16_384, decoders: Int = 4) {
        self.tables = tables
        self.capacity = capacity
        self.decoders = decoders
        let thread = Thread { [self] in writer() }
        thread.name = "loupe-ingest"
        thread.start()
    }

    /// Makes the stored forms of received spans (payload JSON, compressed source) on every core,
    /// so the one writer only puts traces together and writes them. A server calls it while the
    /// request still holds its decoding slot (``admit()``), which bounds this work too.
    package func prepare(_ spans: [OTLPImporter.OTLPSpan]) -> [Prepared] {
        parallelMap(spans, serialBelow: 64, Prepared.init)
    }

    /// Queues `spans` and returns once they are committed.
    package func submit(_ spans: [OTLPImporter.OTLPSpan], source: String) async throws {
        try await submit(prepare(spans), source: source)
    }

    /// Queues prepared spans and returns once they are committed.
    ///
    /// - Parameter source: what the traces' source column says ("OTLP/HTTP", "OTLP/gRPC").
    package func submit(_ spans: [Prepared], source: String) async throws {
        if spans.isEmpty {
            if state.withLock({ $0.stopping }) { throw Refusal.stopping }
            return
        }
        return try await withCheckedThrowingContinuation { answer in
            let refusal: Refusal? = state.withLock { state in
                if state.stopping { return .stopping }
                if state.queued > 0 && state.queued + spans.count > capacity {
                    state.statistics.refused += 1
                    return .busy(queued: state.queued, capacity: capacity)
                }
                state.pending.append(Pending(spans: spans, source: source, answer: answer))
                state.queued += spans.count
                return nil
            }
            if let refusal { answer.resume(throwing: refusal) } else { wake.signal() }
        }
    }

    /// Admits one request to be read and decoded, or refuses it at once — before its body is
    /// read — when the queue is full or ``decoders`` requests are being decoded. An admitted
    /// request calls ``finishedDecoding()`` once it is queued or failed.
    package func admit() throws(Refusal) {
        let refusal: Refusal? = state.withLock { state in
            if state.stopping { return .stopping }
            guard state.queued < capacity, state.decoding < decoders else {
                state.statistics.refused += 1
                return .busy(queued: state.queued, capacity: capacity)
            }
            state.decoding += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    package func finishedDecoding() {
        state.withLock { $0.decoding -= 1 }
    }

    /// Refuses new requests, then waits until every queued one is committed and answered.
    package func drain() {
        let idle = state.withLock { state -> Bool in
            state.stopping = true
            return state.pending.isEmpty && !state.writing
        }
        wake.signal()
        if !idle { drained.wait() }
    }

    package var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queued = state.queued
            let now = ContinuousClock.now
            let window = state.recent.filter { now - $0.at < .seconds(5) }
            statistics.spansPerSecond = Double(window.reduce(0) { $0 + $1.spans }) / 5
            return statistics
        }
    }

    /// Until ``drain()``: waits for requests, takes every one queued, commits them together.
    private func writer() {
        // Spans written since the log was last copied into the database (a trace that grows is
        // written whole each time, so this counts its stored spans too): the commit that
        // answers requests leaves that to here, after the answers (about 8 MB at a time, twice what
        // SQLite's own checkpoint would copy).
        var sinceCheckpoint = 0
        while true {
            wake.wait()
            let batch = state.withLock { state -> [Pending] in
                let batch = state.pending
                state.pending = []
                state.writing = !batch.isEmpty
                return batch
            }
            if !batch.isEmpty {
                sinceCheckpoint += commit(batch)
                if sinceCheckpoint >= 4096 {
                    try? (tables.database as? Workspace)?.checkpoint()
                    sinceCheckpoint = 0
                }
            }
            let finished = state.withLock { state -> Bool in
                state.writing = false
                return state.stopping && state.pending.isEmpty
            }
            if finished {
                drained.signal()
                return
            }
        }
    }

    /// Stores and answers a batch; the spans written (none when it failed).
    private func commit(_ batch: [Pending]) -> Int {
        let result = Result { try Self.store(batch.map { ($0.spans, $0.source) }, in: tables) }
        let count = batch.reduce(0) { $0 + $1.spans.count }
        state.withLock { state in
            state.queued -= count
            if case .success = result {
                state.statistics.requests += batch.count
                state.statistics.spans += count
                let now = ContinuousClock.now
                state.recent.append((now, count))
                state.recent.removeAll { now - $0.at > .seconds(5) }
            }
        }
        switch result {
        case .success(let written):
            for pending in batch { pending.answer.resume() }
            return written
        case .failure(let error):
            let refusal = Refusal.notStored("\(error)")
            for pending in batch { pending.answer.resume(throwing: refusal) }
            return 0
        }
    }

    /// Stores the spans of several requests in one transaction: each trace they touch is put
    /// together from its stored spans and the new ones (a span sent again replaces itself).
    /// Returns the spans written: every span of each trace touched, stored ones included.
    static func store(_ requests: [(spans: [Prepared], source: String)], in tables: TraceTables) throws -> Int {
        var order: [String] = []
        var incoming: [String: [Prepared]] = [:]
        var sources: [String: String] = [:]
        for request in requests {
            for prepared in request.spans {
                let traceID = prepared.span.traceID
                if incoming[traceID] == nil {
                    order.append(traceID)
                    sources[traceID] = request.source
                }
                incoming[traceID, default: []].append(prepared)
            }
        }
        let stored = try tables.storedSources(format: TraceFormat.otlp.rawValue, externalIDs: order)
        let traces = try order.map {
            id -> (trace: Trace, source: String?, encoded: [String: TraceService.EncodedSpan]) in
            var spans: [OTLPImporter.OTLPSpan] = []
            var encoded: [String: TraceService.EncodedSpan] = [:]
            var index: [String: Int] = [:]
            var metadata: JSONObject = [:]
            if let before = stored[id] {
                metadata = before.metadataJSON.flatMap { try? JSONValue.parse($0) }?.object ?? [:]
                for packed in before.spans {
                    guard let source = Zstd.decompress(packed) else {
                        throw TraceImportError(file: "trace \(id)", "a stored span's source is unreadable")
                    }
                    let span = try OTLPDecoding.storedSpan(source, file: "trace \(id)")
                    index[span.span.spanID] = spans.count
                    spans.append(span)
                }
            }
            var service = metadata["service.name"]?.string
            for prepared in incoming[id]! {
                let new = prepared.span
                if let at = index[new.span.spanID] {
                    spans[at] = new
                } else {
                    index[new.span.spanID] = spans.count
                    spans.append(new)
                }
                encoded[new.span.spanID] = prepared.encoded
                service = new.service ?? service
            }
            var trace = OTLPImporter.trace(id: id, spans: spans, service: service)
            trace.metadata = metadata.merging(trace.metadata) { _, new in new }
            return (trace, sources[id], encoded)
        }
        // The received spans come encoded; a trace's stored spans read again are encoded here.
        let now = Date()
        let records = traces.map {
            TraceService.record($0.trace, sourceFile: $0.source, encoded: $0.encoded, importedAt: now)
        }
        _ = try tables.importTraces(records, deferringCheckpoint: true)
        return records.reduce(0) { $0 + $1.spans.count }
    }
}
