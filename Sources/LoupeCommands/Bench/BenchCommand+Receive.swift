import ArgumentParser
import Foundation
import Glibc
import LoupeBase
import LoupeKit
import LoupeOTLP
import LoupeStore
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension BenchCommand {
    struct Receive: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "receive",
            abstract: "OTLP/HTTP ingest into `loupe serve`: sustained spans/s, acknowledgement latency, overload.",
            discussion: """
                Starts `loupe serve` (a separate process, HTTP only, a fresh workspace) and sends it OTLP/HTTP \
                protobuf requests of GenAI spans (about 2 KB each: a model call with its messages and usage, \
                eight spans a trace, 512 spans a request, every trace new), as an SDK's batch exporter sends \
                them. Sustained: as fast as it acknowledges, over several connections. Latency: an open loop \
                at --rate spans/s, each request's time to its 200. Overload: an open loop at three times the \
                sustained rate; what it refuses (503) is counted, and at the end every acknowledged span must \
                be in the workspace. Peak RSS is the server's.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Seconds of each phase.") var seconds = 8.0
        @Option(help: "Spans a request.") var batch = 512
        @Option(help: "Concurrent requests in the sustained phase.") var connections = 4
        @Option(help: "Spans per second offered in the latency phase.") var rate = 5000
        @Flag(help: "Print JSON.") var json = false

        struct Result: Encodable {
            var spanBytes: Double
            var batch: Int
            var sustainedSpansPerSecond: Double
            var sustainedRequests: Int
            var latencyRate: Int
            var latencyMilliseconds: Stats
            var overloadOfferedSpansPerSecond: Double
            var overloadAcceptedSpansPerSecond: Double
            var overloadRefusedRequests: Int
            var acknowledgedSpans: Int
            var storedSpans: Int
            var lostSpans: Int
            var serverPeakRSSMegabytes: Double
        }

        /// One phase's tally.
        final class Tally: Sendable {
            struct Counts {
                var acknowledged = 0
                var refused = 0
                var failed = 0
                var latencies: [Double] = []
            }
            let counts = Mutex(Counts())
        }

        func run(in context: CommandContext) throws {
            guard batch >= 8, batch % 8 == 0 else { throw CommandFailure("--batch \(batch): use a multiple of 8") }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-rx-\(UUID())")
                .path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try ServerProcess(workspace: directory + "/w.sqlite")
            defer { server.stopIfRunning() }
            let endpoint = URL(string: server.endpoint)!
            let generator = Generator(batch: batch)
            let spanBytes = Double(generator.body().count) / Double(batch)

            // Sustained: as fast as the server acknowledges.
            let sustained = Tally()
            let started = Date()
            try awaitFromSync {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for _ in 0..<connections {
                        tasks.addTask {
                            while Date().timeIntervalSince(started) < seconds {
                                let status = await Self.post(generator.body(), to: endpoint, tally: sustained)
                                if status == 503 { try await Task.sleep(for: .milliseconds(20)) }
                            }
                        }
                    }
                    try await tasks.waitForAll()
                }
            }
            let sustainedElapsed = Date().timeIntervalSince(started)
            let sustainedCounts = sustained.counts.withLock { $0 }
            let throughput = Double(sustainedCounts.acknowledged * batch) / sustainedElapsed

            // Latency at a fixed offered rate, then overload at three times what it sustained.
            let latency = Tally()
            try Self.openLoop(rate: Double(rate), seconds: seconds, batch: batch, generator, endpoint, latency)
            let overload = Tally()
            let offered = 3 * throughput
            let overloadElapsed = try Self.openLoop(
                rate: offered, seconds: seconds, batch: batch, generator, endpoint, overload)
            let latencyCounts = latency.counts.withLock { $0 }
            let overloadCounts = overload.counts.withLock { $0 }

            let peak = server.peakRSSMegabytes()
            server.stop()
            let acknowledged =
                (sustainedCounts.acknowledged + latencyCounts.acknowledged + overloadCounts.acknowledged) * batch
            let stored = try Workspace(path: directory + "/w.sqlite").traceSummaries().reduce(0) { $0 + $1.spanCount }
            let result = Result(
                spanBytes: spanBytes, batch: batch, sustainedSpansPerSecond: throughput,
                sustainedRequests: sustainedCounts.acknowledged, latencyRate: rate,
                latencyMilliseconds: Stats(latencyCounts.latencies),
                overloadOfferedSpansPerSecond: offered,
                overloadAcceptedSpansPerSecond: Double(overloadCounts.acknowledged * batch) / overloadElapsed,
                overloadRefusedRequests: overloadCounts.refused, acknowledgedSpans: acknowledged, storedSpans: stored,
                lostSpans: max(0, acknowledged - stored), serverPeakRSSMegabytes: peak)
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                String(
                    format: """
                        OTLP/HTTP protobuf into loupe serve, %.0f bytes a span, %d spans a request
                        sustained   %8.0f spans/s (%d requests over %d connections)
                        latency     at %d spans/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms
                        overload    offered %.0f spans/s: accepted %.0f spans/s, %d requests refused (503)
                        durability  %d spans acknowledged, %d stored, %d lost
                        memory      server peak RSS %.1f MB
                        """, spanBytes, batch, throughput, sustainedCounts.acknowledged, connections, rate,
                    result.latencyMilliseconds.median, result.latencyMilliseconds.p99, result.latencyMilliseconds.max,
                    offered, result.overloadAcceptedSpansPerSecond, overloadCounts.refused, acknowledged, stored,
                    result.lostSpans, peak))
        }

        /// Sends a request every `batch / rate` seconds for `seconds`, without waiting for answers.
        /// Returns the seconds from the first request to the last answer.
        @discardableResult
        static func openLoop(
            rate: Double, seconds: Double, batch: Int, _ generator: Generator, _ endpoint: URL, _ tally: Tally
        ) throws -> Double {
            let begun = Date()
            let interval = Double(batch) / rate
            try awaitFromSync {
                await withTaskGroup(of: Void.self) { tasks in
                    let start = ContinuousClock.now
                    var sent = 0
                    while Double(sent) * interval < seconds {
                        let due = start + .seconds(Double(sent) * interval)
                        try? await Task.sleep(until: due, clock: .continuous)
                        let body = generator.body()
                        tasks.addTask { _ = await post(body, to: endpoint, tally: tally) }
                        sent += 1
                    }
                }
            }
            return Date().timeIntervalSince(begun)
        }

        /// Up to 256 connections at once, as many exporters would open: URLSession's default of a
        /// few per host would queue the overload in this client instead of at the server.
        static let session: URLSession = {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 256
            configuration.timeoutIntervalForRequest = 60
            return URLSession(configuration: configuration)
        }()

        /// POSTs one request; records its latency when acknowledged. The HTTP status (0: no answer).
        static func post(_ body: Data, to endpoint: URL, tally: Tally) async -> Int {
            var request = URLRequest(url: endpoint)
            request.httpMethod = "POST"
            request.setValue("application/x-protobuf", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
            request.timeoutInterval = 60
            let start = ContinuousClock.now
            let status = (try? await session.data(for: request)).flatMap {
                ($0.1 as? HTTPURLResponse)?.statusCode
            }
            let elapsed = ContinuousClock.now - start
            let milliseconds =
                Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            tally.counts.withLock { counts in
                switch status {
                case 200:
                    counts.acknowledged += 1
                    counts.latencies.append(milliseconds)
                case 503, 429: counts.refused += 1
                default: counts.failed += 1
                }
            }
            return status ?? 0
        }
    }

    /// GenAI spans as an SDK's OTLP exporter encodes them: traces of an agent span and seven model
    /// calls with their messages, every request's trace ids new.
    final class Generator: Sendable {
        let batch: Int
        private let next = Atomic<UInt64>(1)
        private let text: String

        init(batch: Int) {
            self.batch = batch
            let words = "boundary layer transition heat transfer swept wing flutter supersonic inlet pressure"
                .split(separator: " ")
            text = (0..<170).map { words[$0 % words.count] }.joined(separator: " ")
        }

        func body() -> Data {
            var request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest()
            var resource = Opentelemetry_Proto_Trace_V1_ResourceSpans()
            resource.resource.attributes = [.string("service.name", "bench-agent")]
            var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
            scope.scope.name = "loupe.bench"
            let t0 = UInt64(Date().timeIntervalSince1970 * 1e9)
            for _ in 0..<(batch / 8) {
                let trace = next.wrappingAdd(1, ordering: .relaxed).oldValue
                let traceID = Self.bytes(trace, 16)
                for s in 0..<8 {
                    var span = Opentelemetry_Proto_Trace_V1_Span()
                    span.traceID = traceID
                    span.spanID = Self.bytes(trace << 4 | UInt64(s + 1), 8)
                    span.startTimeUnixNano = t0 + UInt64(s) * 1_000_000
                    span.endTimeUnixNano = t0 + UInt64(s) * 1_000_000 + 900_000
                    if s == 0 {
                        span.name = "invoke_agent bench"
                        span.attributes = [.string("gen_ai.operation.name", "invoke_agent")]
                    } else {
                        span.parentSpanID = Self.bytes(trace << 4 | 1, 8)
                        span.name = "chat gpt-4o-mini"
                        span.attributes = [
                            .string("gen_ai.operation.name", "chat"),
                            .string("gen_ai.request.model", "gpt-4o-mini"),
                            .int("gen_ai.usage.input_tokens", 400 + Int64(s)),
                            .int("gen_ai.usage.output_tokens", 40),
                            .string(
                                "gen_ai.input.messages",
                                #"[{"role":"user","parts":[{"type":"text","content":"\#(text)"}]}]"#),
                            .string(
                                "gen_ai.output.messages",
                                #"[{"role":"assistant","parts":[{"type":"text","content":"\#(text.prefix(300))"}]}]"#
                            ),
                        ]
                    }
                    scope.spans.append(span)
                }
            }
            resource.scopeSpans = [scope]
            request.resourceSpans = [resource]
            return request.protobuf
        }

        static func bytes(_ value: UInt64, _ count: Int) -> Data {
            var data = Data(repeating: 0xB0, count: count - 8)
            withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
            return data
        }
    }

    /// `loupe serve` as a child process on a free port.
    final class ServerProcess {
        let process = Process()
        let output = Pipe()
        var endpoint = ""

        init(workspace: String) throws {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["serve", "--workspace", workspace, "--http-port", "0", "--no-grpc"]
            process.standardOutput = output
            process.standardError = output
            try process.run()
            var line = Data()
            while !line.contains(0x0A) {
                let byte = output.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty { break }
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let range = text.firstRange(of: /http:\/\/[0-9.]+:[0-9]+\/v1\/traces/) else {
                process.terminate()
                throw CommandFailure("loupe serve did not start: \(text)")
            }
            endpoint = String(text[range])
        }

        /// The server's peak resident memory (VmHWM), in MB.
        func peakRSSMegabytes() -> Double {
            guard
                let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
            else { return .nan }
            return kilobytes / 1024
        }

        /// SIGTERM, then waits: it commits what it acknowledged and exits.
        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }

        func stopIfRunning() { stop() }
    }
}
