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
/// Spans of one trace may come in any order and over many requests: each request's spans are
/// appended to the stored trace by span id (a span sent again replaces itself), so a trace grows,
/// a request sent twice changes nothing, and a request costs what its own spans cost.
///
/// The workspace file stays whole: the log is folded into the file once it passes
/// ``logBound`` bytes, and when the ingest drains (a clean stop of `loupe serve` or a listener).
package final class TraceIngest: Sendable {
    package enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// The queue holds `queued` spans, and this request's would pass `capacity`.
        case busy(queued: Int, capacity: Int)
        /// The ingest is draining before the process stops.
        case stopping
        /// The workspace could not commit; the spans were not stored.
        case notStored(String)
        /// Bodies being read hold `reading` bytes; this request's next bytes would pass `budget`.
        case tooManyBytes(reading: Int, budget: Int)

        package var description: String {
            switch self {
            case .busy(let queued, let capacity):
                "busy: \(queued) spans are waiting to be stored (the queue holds \(capacity)); retry later"
            case .stopping: "the receiver is stopping; retry against it once it is back"
            case .notStored(let why): "the spans were not stored: \(why)"
            case .tooManyBytes(let reading, let budget):
                "busy: \(reading) bytes of requests are being read (at most \(budget) at once); retry later"
            }
        }
    }

    /// Totals since the ingest started, for a status bar and `loupe serve`'s log.
    package struct Statistics: Hashable, Sendable {
        package var requests = 0
        package var spans = 0
        package var refused = 0
        package var queued = 0
        /// Requests queued that the writer has not taken into a batch yet.
        package var waiting = 0
        /// Requests admitted to be decoded (``admit()``).
        package var admitted = 0
        /// Bytes of request bodies and messages taken into the byte budget (``reserve(bytes:)``).
        package var admittedBytes = 0
        /// Bytes held by requests being read right now.
        package var reading = 0
        /// Spans committed in the last few seconds, per second.
        package var spansPerSecond = 0.0
        /// Why the last fold of the log into the workspace file did not complete (the file and
        /// SQLite's answer); nil once one does. `loupe serve` prints it.
        package var logNotFolded: String?
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
        /// Bytes of requests being read and decoded (``reserve(bytes:)``, not yet released).
        var reading = 0
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
    /// The most bytes of request bodies held at once while they are read and decoded: what bounds
    /// the memory of requests before they take a decoding slot.
    package let byteBudget: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)

    /// - Parameter capacity: the most spans waiting to be stored at once; a request that would
    ///   pass it is refused (unless the queue is empty: one request always fits, its size is
    ///   bounded by the server's body limit).
    /// - Parameter byteBudget: the most bytes of requests being read at once (``reserve(bytes:)``).
    package convenience init(
        workspace: Workspace, capacity: Int = 16_384, decoders: Int = 4, byteBudget: Int = 256 << 20
    ) {
        self.init(tables: TraceTables(workspace), capacity: capacity, decoders: decoders, byteBudget: byteBudget)
    }

    /// An ingest into `tables`, on SQLite or PostgreSQL.
    package init(tables: TraceTables, capacity: Int = 16_384, decoders: Int = 4, byteBudget: Int = 256 << 20) {
        self.tables = tables
        self.capacity = capacity
        self.decoders = decoders
        self.byteBudget = byteBudget
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

    /// Admits one request whose body has been read to be decoded, or refuses it at once when the
    /// queue is full or ``decoders`` requests are being decoded. A slot is taken only once the
    /// whole body is in hand (the servers read it first, against ``reserve(bytes:)``), so a client
    /// that sends slowly holds no slot and cannot shut others out; a slot is held only for the
    /// CPU work of decoding and ``prepare(_:)``. An admitted request calls ``finishedDecoding()``
    /// once it is queued or failed.
    package func admit() throws(Refusal) {
        let refusal: Refusal? = state.withLock { state in
            if state.stopping { return .stopping }
            guard state.queued < capacity, state.decoding < decoders else {
                state.statistics.refused += 1
                return .busy(queued: state.queued, capacity: capacity)
            }
            state.decoding += 1
            state.statistics.admitted += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    package func finishedDecoding() {
        state.withLock { $0.decoding -= 1 }
    }

    /// Takes `bytes` of a request being read (a chunk of an HTTP body as it arrives, a gRPC
    /// message once the transport has it) from ``byteBudget``, or refuses at once when that would
    /// pass it. Nothing reserved is the exception: one request always fits, its size bounded by
    /// the server's body limit. The bytes are given back with ``release(bytes:)`` once the
    /// request is queued or failed; what waits in the queue is bounded by ``capacity`` instead.
    package func reserve(bytes: Int) throws(Refusal) {
        let refusal: Refusal? = state.withLock { state in
            if state.stopping { return .stopping }
            if state.reading > 0 && state.reading + bytes > byteBudget {
                state.statistics.refused += 1
                return .tooManyBytes(reading: state.reading, budget: byteBudget)
            }
            state.reading += bytes
            state.statistics.admittedBytes += bytes
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Gives back bytes taken with ``reserve(bytes:)``.
    package func release(bytes: Int) {
        state.withLock { $0.reading -= bytes }
    }

    /// Refuses new requests, then waits until every queued one is committed and answered.
    ///
    /// It waits for the writer to finish even when nothing is queued: the writer folds the log
    /// into the file as it stops, and a caller that copies the file next must find it folded.
    /// Calling it again returns at once.
    package func drain() {
        state.withLock { $0.stopping = true }
        wake.signal()
        drained.wait()
        drained.signal()
    }

    package var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.queued = state.queued
            statistics.waiting = state.pending.count
            statistics.reading = state.reading
            let now = ContinuousClock.now
            let window = state.recent.filter { now - $0.at < .seconds(5) }
            statistics.spansPerSecond = Double(window.reduce(0) { $0 + $1.spans }) / 5
            return statistics
        }
    }

    /// The log size, in bytes, past which the writer folds it into the workspace file after
    /// answering (about twice what SQLite's own checkpoint would copy at a time): bytes, not
    /// spans, since a few spans of 30 MB each made a log of a gigabyte.
    package static let logBound: Int64 = 8 << 20

    /// Until ``drain()``: waits for requests, takes every one queued, commits them together.
    /// The commit that answers requests leaves SQLite's checkpoint to here, after the answers;
    /// the last thing it does is fold the whole log into the file, so that the file alone (a
    /// copy of it) holds everything acknowledged.
    private func writer() {
        while true {
            wake.wait()
            let batch = state.withLock { state -> [Pending] in
                let batch = state.pending
                state.pending = []
                state.writing = !batch.isEmpty
                return batch
            }
            if !batch.isEmpty {
                _ = commit(batch)
                fold(past: Self.logBound)
            }
            let finished = state.withLock { state -> Bool in
                state.writing = false
                return state.stopping && state.pending.isEmpty
            }
            if finished {
                fold(past: nil, attempts: 2)
                drained.signal()
                return
            }
        }
    }

    /// Folds the log (``SQLDatabase/foldLog(past:)``), trying a fold that a reader of the log
    /// blocked `attempts` times in all, a pause apart. The fold is best effort (nothing is lost
    /// when it fails: the rest stays in the log), but not silent: what stopped the last try is
    /// kept in ``Statistics/logNotFolded``, cleared by the next fold that completes.
    private func fold(past bytes: Int64?, attempts: Int = 1) {
        var failure: WorkspaceError?
        for attempt in 0..<attempts {
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.25) }
            do {
                try tables.database.foldLog(past: bytes)
                failure = nil
                break
            } catch {
                failure = error
            }
        }
        state.withLock { $0.statistics.logNotFolded = failure?.description }
    }

    /// Stores and answers a batch; the spans written.
    ///
    /// The batch goes in one transaction. When that fails for one request's sake (a trace it adds
    /// to whose stored metadata is damaged), refusing every request would refuse the others for
    /// good (their exporters retry the same batch or drop it), so each request is then stored in
    /// its own transaction, in order, and only the one that fails is refused, with its error. A
    /// failure of the workspace as a whole (locked past the busy timeout, a server out of reach)
    /// refuses the batch at once: alone, each request would wait for it again.
    private func commit(_ batch: [Pending]) -> Int {
        let whole = Result { try Self.store(batch.map { ($0.spans, $0.source) }, in: tables) }
        let results: [Result<Int, any Error>]
        switch whole {
        case .failure(let error) where batch.count > 1 && Self.isAboutOneRequest(error):
            results = batch.map { pending in Result { try Self.store([(pending.spans, pending.source)], in: tables) } }
        case .failure(let error):
            results = Array(repeating: .failure(error), count: batch.count)
        case .success(let written):
            // The spans written are counted once, on the first request.
            results = [.success(written)] + Array(repeating: .success(0), count: batch.count - 1)
        }
        state.withLock { state in
            state.queued -= batch.reduce(0) { $0 + $1.spans.count }
            let stored = zip(batch, results).filter { if case .success = $1 { true } else { false } }
            guard !stored.isEmpty else { return }
            let count = stored.reduce(0) { $0 + $1.0.spans.count }
            state.statistics.requests += stored.count
            state.statistics.spans += count
            let now = ContinuousClock.now
            state.recent.append((now, count))
            state.recent.removeAll { now - $0.at > .seconds(5) }
        }
        var written = 0
        for (pending, result) in zip(batch, results) {
            switch result {
            case .success(let rows):
                written += rows
                pending.answer.resume()
            case .failure(let error):
                pending.answer.resume(throwing: Refusal.notStored("\(error)"))
            }
        }
        return written
    }

    /// Whether a failed commit may be one request's doing, so that storing the requests one by
    /// one stores the others: not when the workspace as a whole was locked, out of reach or
    /// unwritable.
    private static func isAboutOneRequest(_ error: any Error) -> Bool {
        guard let error = error as? WorkspaceError else { return true }
        switch error.code {
        case .busy, .unreachable, .inaccessible, .schemaTooNew, .notAWorkspace: return false
        case .database: return true
        }
    }

    /// Stores the spans of several requests in one transaction. The spans of each trace they
    /// touch are put together as a trace of their own (a span sent twice in the batch: its last
    /// copy) and appended to the stored trace (``TraceTables/appendSpans(_:deferringCheckpoint:)``),
    /// which reads and writes no other span's content: a trace that grows over many requests
    /// costs each what its new spans cost, and two receivers on one workspace add to one trace
    /// without losing each other's spans. Returns the span rows written.
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
        let now = Date()
        let arrivals = order.map { id -> NewTrace in
            var spans: [OTLPImporter.OTLPSpan] = []
            var encoded: [String: TraceService.EncodedSpan] = [:]
            var index: [String: Int] = [:]
            var service: String?
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
            let trace = OTLPImporter.trace(id: id, spans: spans, service: service)
            return TraceService.record(trace, sourceFile: sources[id], encoded: encoded, importedAt: now)
        }
        return try tables.appendSpans(arrivals, deferringCheckpoint: true)
    }
}
