import Foundation
import Glibc
import LoupeBase
import LoupeCommands
import LoupeOTLP
import Synchronization

extension BenchCommand.Receive {
    /// The abuse phase: one well-behaved exporter (one request at a time, as an SDK's batch
    /// processor sends) alone, then beside the clients that shut the server for everyone before
    /// issue 64 (reliability findings F-2, F-3, F-6): uploads that trickle a byte a second,
    /// bodies past the size limit, and a trace that grows by one span a request, twenty a second.
    struct Abuse: Encodable {
        var aloneSpansPerSecond: Double
        var abusedSpansPerSecond: Double
        /// The exporter's rate under abuse over its rate alone (the issue asks for ≥ 0.8).
        var ratio: Double
        var exporterRefusedRequests: Int
        var exporterFailedRequests: Int
        var slowClients: Int
        /// Slow uploads the server answered or closed (408 past the minimum rate).
        var slowConnectionsClosed: Int
        var oversizedRequests: Int
        /// Oversized bodies answered 413.
        var oversizedRefused: Int
        var growingTraceSpans: Int
        var growingTraceMilliseconds: Stats
        var serverPeakRSSMegabytes: Double
        /// Spans the server acknowledged in the phase: the exporter's and the growing trace's.
        var acknowledgedSpans: Int
    }

    /// What the abusers count while they run.
    private final class Counters: Sendable {
        let stop = Atomic<Bool>(false)
        let closed = Atomic<Int>(0)
        let oversized = Atomic<Int>(0)
        let tooLarge = Atomic<Int>(0)
    }

    /// Runs the phase against `endpoint` for `seconds` alone and `seconds` under abuse.
    static func abuse(
        _ endpoint: URL, _ generator: BenchCommand.Generator, seconds: Double, slowClients: Int,
        peakRSS: () -> Double
    ) throws -> Abuse {
        let (alone, aloneElapsed) = try sustain(endpoint, generator, connections: 1, seconds: seconds)
        let counters = Counters()
        let port = endpoint.port ?? 4318
        let trickles = (0..<slowClients).map { _ in
            let thread = Thread { trickle(port: port, counters) }
            thread.start()
            return thread
        }
        let oversizing = Thread { oversize(port: port, counters) }
        oversizing.start()
        let growing = Tally()
        let (abused, abusedElapsed) = try awaitFromSync {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    var index = 0
                    while !counters.stop.load(ordering: .relaxed) {
                        index += 1
                        _ = await post(growingSpan(index), to: endpoint, tally: growing)
                        // An agent exporting each step as it ends: twenty a second.
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                let measured = try sustain(endpoint, generator, connections: 1, seconds: seconds)
                counters.stop.store(true, ordering: .relaxed)
                try await tasks.waitForAll()
                return measured
            }
        }
        for thread in trickles + [oversizing] { while !thread.isFinished { Thread.sleep(forTimeInterval: 0.05) } }
        let aloneRate = Double(alone.acknowledged * generator.batch) / aloneElapsed
        let abusedRate = Double(abused.acknowledged * generator.batch) / abusedElapsed
        let growingCounts = growing.counts.withLock { $0 }
        return Abuse(
            aloneSpansPerSecond: aloneRate, abusedSpansPerSecond: abusedRate,
            ratio: aloneRate > 0 ? abusedRate / aloneRate : 0, exporterRefusedRequests: abused.refused,
            exporterFailedRequests: abused.failed, slowClients: slowClients,
            slowConnectionsClosed: counters.closed.load(ordering: .relaxed),
            oversizedRequests: counters.oversized.load(ordering: .relaxed),
            oversizedRefused: counters.tooLarge.load(ordering: .relaxed), growingTraceSpans: growingCounts.acknowledged,
            growingTraceMilliseconds: Stats(growingCounts.latencies), serverPeakRSSMegabytes: peakRSS(),
            acknowledgedSpans: (alone.acknowledged + abused.acknowledged) * generator.batch + growingCounts.acknowledged
        )
    }

    /// One upload that declares a megabyte and sends a byte a second, again on a new connection
    /// whenever the server closes it, until `stop`. Raw bytes on a socket: no HTTP client sends
    /// this slowly, which is the point.
    private static func trickle(port: Int, _ counters: Counters) {
        let header = head(declaring: 1_000_000)
        while !counters.stop.load(ordering: .relaxed) {
            guard let socket = LoopbackPort.connect(port) else { return }
            defer { close(socket) }
            guard send(socket, header, header.count, Int32(MSG_NOSIGNAL)) == header.count else { continue }
            var open = true
            while open && !counters.stop.load(ordering: .relaxed) {
                // Ten 0.1 s waits a byte, so the phase's end is not held a second.
                for _ in 0..<10 where !counters.stop.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.1) }
                var byte: UInt8 = 0x20
                open = send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 && !answered(socket)
            }
            if !open { counters.closed.add(1, ordering: .relaxed) }
        }
    }

    /// Requests that declare a body past the 32 MB limit, ten a second until `stop`: each is
    /// answered (413 expected) before its body is sent, and its connection closed.
    private static func oversize(port: Int, _ counters: Counters) {
        let header = head(declaring: 33 << 20)
        while !counters.stop.load(ordering: .relaxed) {
            guard let socket = LoopbackPort.connect(port) else { return }
            defer { close(socket) }
            counters.oversized.add(1, ordering: .relaxed)
            guard send(socket, header, header.count, Int32(MSG_NOSIGNAL)) == header.count else { continue }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 2000) > 0 {
                var answer = [UInt8](repeating: 0, count: 64)
                let count = recv(socket, &answer, answer.count, 0)
                if count > 12, String(decoding: answer[9..<12], as: UTF8.self) == "413" {
                    counters.tooLarge.add(1, ordering: .relaxed)
                }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// An OTLP/HTTP request's head that declares a protobuf body of `length` bytes.
    private static func head(declaring length: Int) -> [UInt8] {
        Array(
            "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\nContent-Length: \(length)\r\n\r\n"
                .utf8)
    }

    /// Whether the server has answered or closed `socket` (readable without blocking).
    private static func answered(_ socket: Int32) -> Bool {
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// One span of the growing trace, the `index`th, as a request of its own.
    private static func growingSpan(_ index: Int) -> Data {
        var request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest()
        var resource = Opentelemetry_Proto_Trace_V1_ResourceSpans()
        resource.resource.attributes = [.string("service.name", "bench-growing")]
        var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
        var span = Opentelemetry_Proto_Trace_V1_Span()
        span.traceID = Data(repeating: 0x6C, count: 16)
        span.spanID = BenchCommand.Generator.bytes(UInt64(index), 8)
        if index > 1 { span.parentSpanID = BenchCommand.Generator.bytes(1, 8) }
        let now = UInt64(Date().timeIntervalSince1970 * 1e9)
        span.startTimeUnixNano = now
        span.endTimeUnixNano = now + 1_000_000
        span.name = index == 1 ? "session" : "step \(index)"
        span.attributes = [.string("note", String(repeating: "x", count: 500))]
        scope.spans = [span]
        resource.scopeSpans = [scope]
        request.resourceSpans = [resource]
        return request.protobuf
    }
}
