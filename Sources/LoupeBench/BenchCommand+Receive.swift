import ArgumentParser
import AsyncHTTPClient
import Foundation
import Glibc
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeOTLP
import LoupeStore
import NIOCore
import NIOHTTP1
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
                them. Sustained: as fast as it acknowledges, --connections requests at once (eight; a \
                Collector's exporter sends ten by default). Latency: an open loop at --rate spans/s, each \
                request's time to its 200. Overload: an open loop at three times the \
                sustained rate; what it refuses (503) is counted, and at the end every acknowledged span must \
                be in the workspace. Peak RSS is the server's.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Seconds of each phase.") var seconds = 8.0
        @Option(help: "Spans a request.") var batch = 512
        /// Eight: a Collector's OTLP exporter sends ten requests at once by default
        /// (`sending_queue.num_consumers`), an SDK's batch processor one.
        @Option(help: "Concurrent requests in the sustained phase.") var connections = 8
        @Option(help: "Spans per second offered in the latency phase.") var rate = 5000
        @Option(
            help: """
                Arize Phoenix's `phoenix` program, loaded the same way for the ratio (default: \
                .venv-peers/bin/phoenix when it is there; none: leave it out).
                """)
        var phoenix: String?
        @Flag(
            inversion: .prefixedNo,
            help: """
                The abuse phase: one exporter alone, then beside slow uploads, bodies past the limit and a \
                trace growing a span a request.
                """)
        var abuse = true
        @Option(help: "Uploads that send a byte a second in the abuse phase.") var slowClients = 4
        @Flag(help: "Print JSON.") var json = false

        /// The same sustained load against a peer. A peer that acknowledges before it commits is
        /// timed until everything it acknowledged is stored.
        struct Peer: Encodable {
            var name: String
            var acknowledgedSpansPerSecond: Double
            var committedSpansPerSecond: Double
            var acknowledgedSpans: Int
            var storedSpans: Int
            var refusedRequests: Int
            var failedRequests: Int
            var peakRSSMegabytes: Double
            /// Loupe's committed spans/s over the peer's.
            var loupeRatio: Double
        }

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
            var abuse: Abuse?
            var peers: [Peer]
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
            let (sustainedCounts, sustainedElapsed) = try Self.sustain(
                endpoint, generator, connections: connections, seconds: seconds)
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
            let abused =
                try abuse
                ? Self.abuse(
                    endpoint, generator, seconds: seconds, slowClients: slowClients,
                    peakRSS: { server.peakRSSMegabytes() }) : nil

            let peak = server.peakRSSMegabytes()
            server.stop()
            let acknowledged =
                (sustainedCounts.acknowledged + latencyCounts.acknowledged + overloadCounts.acknowledged) * batch
                + (abused?.acknowledgedSpans ?? 0)
            let stored = try Workspace(path: directory + "/w.sqlite").traces.traceSummaries().reduce(0) {
                $0 + $1.spanCount
            }
            let result = Result(
                spanBytes: spanBytes, batch: batch, sustainedSpansPerSecond: throughput,
                sustainedRequests: sustainedCounts.acknowledged, latencyRate: rate,
                latencyMilliseconds: Stats(latencyCounts.latencies),
                overloadOfferedSpansPerSecond: offered,
                overloadAcceptedSpansPerSecond: Double(overloadCounts.acknowledged * batch) / overloadElapsed,
                overloadRefusedRequests: overloadCounts.refused, acknowledgedSpans: acknowledged, storedSpans: stored,
                lostSpans: max(0, acknowledged - stored), serverPeakRSSMegabytes: peak, abuse: abused,
                peers: try phoenixProgram().map {
                    [try Self.phoenixPeer($0, generator, connections: connections, seconds: seconds, loupe: throughput)]
                } ?? [])
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
            if let abused {
                context.print(
                    String(
                        format: """
                            abuse       one exporter alone %.0f spans/s; beside %d slow uploads, bodies past the \
                            limit and a growing trace %.0f spans/s (%.2f× alone; %d refused, %d failed)
                                        slow uploads closed %d times; oversized bodies %d, %d answered 413; \
                            growing trace %d spans, p50 %.1f ms, p99 %.1f ms a span
                            """, abused.aloneSpansPerSecond, abused.slowClients, abused.abusedSpansPerSecond,
                        abused.ratio, abused.exporterRefusedRequests, abused.exporterFailedRequests,
                        abused.slowConnectionsClosed, abused.oversizedRequests, abused.oversizedRefused,
                        abused.growingTraceSpans, abused.growingTraceMilliseconds.median,
                        abused.growingTraceMilliseconds.p99))
            }
            for peer in result.peers {
                context.print(
                    String(
                        format: """
                            %@ (same sustained load): acknowledged %.0f spans/s, stored %.0f spans/s \
                            (%d of %d acknowledged spans stored), peak RSS %.1f MB; loupe serve %.2f× its stored rate
                            """, peer.name, peer.acknowledgedSpansPerSecond, peer.committedSpansPerSecond,
                        peer.storedSpans, peer.acknowledgedSpans, peer.peakRSSMegabytes, peer.loupeRatio))
            }
        }

        /// The Phoenix program to load: --phoenix, else the peers' venv's when it is there.
        private func phoenixProgram() -> String? {
            if let phoenix { return phoenix == "none" ? nil : phoenix }
            let beside = FileManager.default.currentDirectoryPath + "/.venv-peers/bin/phoenix"
            return FileManager.default.isExecutableFile(atPath: beside) ? beside : nil
        }

        /// Phoenix (its default SQLite, a fresh working directory) under the sustained load, then
        /// timed until what it acknowledged is stored: it queues spans and inserts them later.
        static func phoenixPeer(
            _ program: String, _ generator: Generator, connections: Int, seconds: Double, loupe: Double
        ) throws -> Peer {
            let peer = try PhoenixProcess(program: program)
            defer { peer.stop() }
            let started = Date()
            let (counts, acknowledgedElapsed) = try sustain(
                peer.endpoint, generator, connections: connections, seconds: seconds)
            let acknowledged = counts.acknowledged * generator.batch
            var stored = 0
            while Date().timeIntervalSince(started) < seconds + 300 {
                stored = try peer.storedSpans()
                if stored >= acknowledged { break }
                Thread.sleep(forTimeInterval: 0.25)
            }
            let committed = Double(stored) / Date().timeIntervalSince(started)
            return Peer(
                name: "Phoenix \(peer.version)",
                acknowledgedSpansPerSecond: Double(acknowledged) / acknowledgedElapsed,
                committedSpansPerSecond: committed, acknowledgedSpans: acknowledged, storedSpans: stored,
                refusedRequests: counts.refused, failedRequests: counts.failed,
                peakRSSMegabytes: peer.peakRSSMegabytes(), loupeRatio: committed > 0 ? loupe / committed : 0)
        }

        /// As many requests as `connections` connections get answered in `seconds`; a refused one
        /// waits 20 ms before the next. The counts and the seconds it took.
        static func sustain(
            _ endpoint: URL, _ generator: Generator, connections: Int, seconds: Double
        ) throws -> (Tally.Counts, Double) {
            let tally = Tally()
            let started = Date()
            try awaitFromSync {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for _ in 0..<connections {
                        tasks.addTask {
                            while Date().timeIntervalSince(started) < seconds {
                                let status = await Self.post(generator.body(), to: endpoint, tally: tally)
                                if status == 503 || status == 429 { try await Task.sleep(for: .milliseconds(20)) }
                            }
                        }
                    }
                    try await tasks.waitForAll()
                }
            }
            return (tally.counts.withLock { $0 }, Date().timeIntervalSince(started))
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

        /// Up to 256 connections at once, as many exporters would open, on NIO's event loops:
        /// URLSession on Linux spent as much CPU sending as the server spent storing, and this
        /// client shares the machine with the server it measures.
        static let client: HTTPClient = {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
            configuration.redirectConfiguration = .disallow
            configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
            return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        }()

        /// POSTs one request; records its latency when acknowledged. The HTTP status (0: no answer).
        static func post(_ body: Data, to endpoint: URL, tally: Tally) async -> Int {
            var request = HTTPClientRequest(url: endpoint.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-protobuf")
            request.body = .bytes(ByteBuffer(bytes: body))
            let start = ContinuousClock.now
            var status: Int?
            do {
                let response = try await client.execute(request, timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                status = Int(response.status.code)
            } catch {
                status = nil
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

    /// A process's peak resident memory (VmHWM), in MB.
    static func peakRSSMegabytes(of pid: Int32) -> Double {
        guard
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return .nan }
        return kilobytes / 1024
    }

    /// `phoenix serve` as a child process on free loopback ports, in a fresh working directory.
    final class PhoenixProcess {
        let process = Process()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-phoenix-\(UUID())")
            .path
        let base: String
        private(set) var version = ""
        var endpoint: URL { URL(string: base + "/v1/traces")! }

        init(program: String) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let ports = try LoopbackPort.free(count: 2)
            let port = ports[0]
            base = "http://127.0.0.1:\(port)"
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = ["serve"]
            process.environment = PhoenixServer.environment(directory: directory, port: port, grpcPort: ports[1])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { throw CommandFailure("\(program) did not start: \(error)") }
            let deadline = Date().addingTimeInterval(120)
            var up = false
            while !up && Date() < deadline && process.isRunning {
                up = (try? Self.get(base + "/healthz")) != nil
                if !up { Thread.sleep(forTimeInterval: 0.5) }
            }
            guard up else {
                stop()
                throw CommandFailure("\(program) serve did not answer its health check within 120 s")
            }
            let said = (try? Self.get(base + "/arize_phoenix_version")).map { String(decoding: $0, as: UTF8.self) }
            self.version = String((said ?? "").filter { $0.isLetter || $0.isNumber || $0 == "." }.prefix(20))
        }

        /// Spans stored in all its projects (its GraphQL API's record counts).
        func storedSpans() throws -> Int {
            let query = #"{"query":"{ projects { edges { node { recordCount } } } }"}"#
            let answer = try JSONValue.parse(try Self.post(base + "/graphql", Data(query.utf8)))
            let edges = answer["data"]?["projects"]?["edges"]?.array ?? []
            return Int(edges.reduce(Int64(0)) { $0 + ($1["node"]?["recordCount"]?.int ?? 0) })
        }

        func peakRSSMegabytes() -> Double {
            BenchCommand.peakRSSMegabytes(of: process.processIdentifier)
        }

        /// SIGTERM (it stops in a few seconds), SIGKILL after 20; its directory is removed.
        func stop() {
            if process.isRunning { process.terminate() }
            for _ in 0..<200 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(atPath: directory)
        }

        static func get(_ url: String) throws -> Data {
            try awaitFromSync {
                let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
                guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw CommandFailure("\(url): not 200") }
                return data
            }
        }

        static func post(_ url: String, _ body: Data) throws -> Data {
            try awaitFromSync {
                var request = URLRequest(url: URL(string: url)!)
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = body
                let (data, _) = try await URLSession.shared.data(for: request)
                return data
            }
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
            BenchCommand.peakRSSMegabytes(of: process.processIdentifier)
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
