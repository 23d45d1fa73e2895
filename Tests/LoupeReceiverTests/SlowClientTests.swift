import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import LoupeBase
import LoupeKit
import LoupeOTLP
import LoupeStore
import SwiftProtobuf
import Synchronization
import Testing

@testable import LoupeReceiver

#if canImport(Glibc)
    import Glibc
#endif

/// A client that sends an OTLP/HTTP request's head over a raw socket, then its body a byte at a
/// time, on a thread of its own (not the cooperative pool the receiver answers from): the
/// slow upload of issue 64's F-2. It sends at most `bytes` bytes, stopping early when told to or
/// when the server closes the connection.
final class SlowUpload: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic(false)
    /// Bytes of the body sent before it stopped.
    let sent = Atomic(0)
    /// Everything the server answered, once the upload stopped.
    let answer = Mutex("")

    init(port: Int, bytes: Int = 40, every interval: Double = 0.5) {
        Thread { [self] in
            defer { finished.signal() }
            guard let fd = LoopbackPort.connect(port) else { return }
            defer { close(fd) }
            var timeout = timeval(tv_sec: 0, tv_usec: 10_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let head = Array(
                "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
                    .utf8)
            guard send(fd, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else { return }
            var received = [UInt8]()
            for _ in 0..<bytes where !stopping.load(ordering: .relaxed) {
                guard send(fd, [UInt8(ascii: " ")], 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                sent.add(1, ordering: .relaxed)
                Thread.sleep(forTimeInterval: interval)
                var buffer = [UInt8](repeating: 0, count: 4096)
                let read = recv(fd, &buffer, buffer.count, 0)
                if read > 0 { received += buffer.prefix(read) }
                if read == 0 { break }  // the server closed the connection
            }
            answer.withLock { $0 = String(decoding: received, as: UTF8.self) }
        }.start()
    }

    /// Tells it to stop and waits until it has.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        wait()
    }

    /// Waits until it stopped: it sent all its bytes, or the server closed the connection.
    func wait() {
        finished.wait()
        finished.signal()
    }
}

/// Protobuf messages to and from gRPC's bytes (GRPCProtobuf's coders, which this target does not
/// depend on, do the same).
struct Coder<Message: SwiftProtobuf.Message & Sendable>: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        Bytes(try message.serializedBytes() as [UInt8])
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        try serializedMessageBytes.withUnsafeBytes { try Message(serializedBytes: Array($0)) }
    }
}

/// Issue 64's F-2 and F-6: one client must not lock the others out of the receiver.
@Suite(.serialized) struct SlowClientTests {
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static func port(_ address: String?) throws -> Int {
        try #require(address.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) })
    }

    /// Four uploads sending a byte every half second held the ingest's four decoding slots, and
    /// every other request got 503 until they were cut off 30 s later. Bodies are read before a
    /// slot is taken now: the well-behaved client gets 200 every time.
    @Test func slowUploadsDoNotShutOutAWellBehavedClient() async throws {
        let rx = try await RunningReceiver()
        let port = try Self.port(rx.addresses.http)
        let slow = (0..<4).map { _ in SlowUpload(port: port) }
        // Their heads in, and a byte or two of their bodies.
        try await Task.sleep(for: .seconds(1))
        var statuses: [Int] = []
        for i in 0..<8 {
            let trace = String(format: "%032x", 0x64_00 + i)
            let answer = try await rx.post(try Requests.request(Requests.agentRun(trace: trace)).serializedData())
            statuses.append(answer.status)
            try await Task.sleep(for: .milliseconds(250))
        }
        let stillSending = slow.map { $0.sent.load(ordering: .relaxed) }
        for upload in slow { upload.stop() }
        // The slow uploads were still going while the good client was served.
        #expect(stillSending.allSatisfy { $0 >= 2 }, "\(stillSending)")
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(try rx.traces().count == 8)
        try await rx.stop()
    }

    /// A body that arrives slower than the minimum rate, once the grace is over, is answered 408
    /// and its connection closed; what it sent is given back to the byte budget.
    @Test func aBodyTooSlowIsCutOffWith408() async throws {
        var configuration = ReceiverConfiguration()
        configuration.httpPort = 0
        configuration.grpcPort = nil
        configuration.bodyGrace = .seconds(1)
        configuration.minimumBodyRate = 100
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-slow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ingest = TraceIngest(workspace: try Workspace(path: directory.appendingPathComponent("w.sqlite").path))
        let receiver = try TraceReceiver(configuration: configuration, ingest: ingest)
        let (listening, told) = AsyncStream.makeStream(of: TraceReceiver.Addresses.self)
        let served = Task {
            defer { told.finish() }
            try await receiver.run { told.yield($0) }
        }
        var addresses: TraceReceiver.Addresses?
        for await bound in listening {
            addresses = bound
            break
        }
        // At most 40 bytes, one every half second: it is cut off long before the end.
        let upload = SlowUpload(port: try Self.port(addresses?.http), bytes: 40)
        upload.wait()
        let answer = upload.answer.withLock { $0 }
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(answer.contains("too slowly"), "\(answer)")
        #expect(upload.sent.load(ordering: .relaxed) < 40)
        #expect(ingest.statistics.reading == 0)
        #expect(ingest.statistics.admitted == 0)
        await receiver.stop()
        try await served.value
        ingest.drain()
    }

    /// gRPC checked the token only once grpc-swift had read and decoded the whole message (up to
    /// the body limit), outside the decoding slots. The token is checked on the request's headers
    /// now: an unauthenticated export is refused before its message is even sent, an oversized
    /// one is refused without a byte of it admitted, and an authenticated one is counted in the
    /// same admission (bytes and slots) as OTLP/HTTP's.
    @Test func grpcRefusesAMissingTokenBeforeItsMessage() async throws {
        let rx = try await RunningReceiver(token: "s3cret")
        let port = try Self.port(rx.addresses.grpc)
        typealias Request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
        typealias Response = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse
        var spans = Requests.agentRun()
        spans[0].attributes.append(Requests.string("big", String(repeating: "A", count: 24 << 20)))
        let oversized = Requests.request(spans)
        let small = Requests.request(Requests.agentRun())
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            // The message is sent only if no answer came within 20 s of the headers. Called as a
            // client stream: grpc-swift's client holds a unary call's headers back until its
            // message is written, to send them together.
            let streamed = MethodDescriptor(
                service: Opentelemetry_Proto_Collector_Trace_V1_TraceService.descriptor, method: "Export",
                type: .clientStreaming)
            let (answered, answer) = AsyncStream.makeStream(of: Void.self)
            let sentMessage = Atomic(false)
            let request = StreamingClientRequest(of: Request.self) { writer in
                let early = await withTaskGroup(of: Bool.self) { waiting in
                    waiting.addTask {
                        for await _ in answered { return true }
                        return true
                    }
                    waiting.addTask {
                        try? await Task.sleep(for: .seconds(20))
                        return false
                    }
                    let first = await waiting.next() ?? false
                    waiting.cancelAll()
                    return first
                }
                if !early {
                    sentMessage.store(true, ordering: .relaxed)
                    try await writer.write(small)
                }
            }
            let code = try await client.clientStreaming(
                request: request,
                descriptor: streamed,
                serializer: Coder<Request>(), deserializer: Coder<Response>(),
                options: .defaults
            ) { (response: ClientResponse<Response>) -> RPCError.Code? in
                answer.yield()
                answer.finish()
                if case .failure(let error) = response.accepted { return error.code }
                return nil
            }
            #expect(code == .unauthenticated)
            let waitedForTheMessage = sentMessage.load(ordering: .relaxed)
            #expect(!waitedForTheMessage, "the answer waited for the message")

            let service = Opentelemetry_Proto_Collector_Trace_V1_TraceService.Client(wrapping: client)
            do {
                _ = try await service.export(oversized)
                Issue.record("an export without the token was accepted")
            } catch let error as RPCError {
                #expect(error.code == .unauthenticated)
            }
            let refused = rx.receiver.ingest.statistics
            #expect(refused.admitted == 0 && refused.admittedBytes == 0 && refused.requests == 0)

            _ = try await service.export(small, metadata: ["authorization": "Bearer s3cret"])
            let accepted = rx.receiver.ingest.statistics
            #expect(accepted.admitted == 1)
            #expect(accepted.admittedBytes == (try small.serializedBytes() as [UInt8]).count)
            #expect(accepted.reading == 0)
        }
        #expect(try rx.traces().map(\.spanCount) == [3])
        try await rx.stop()
    }

    /// The OpenTelemetry SDK's own HTTP exporter (BatchSpanProcessor) exports `spans` spans while
    /// four slow uploads run beside it: every one is acknowledged and stored.
    @Test func theSDKsExporterLosesNothingBesideSlowUploads() async throws {
        let python = Self.repositoryRoot.appendingPathComponent(".venv-peers/bin/python").path
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the Python peers are missing: run scripts/python-peers first")
        let rx = try await RunningReceiver()
        let port = try Self.port(rx.addresses.http)
        let slow = (0..<4).map { _ in SlowUpload(port: port) }
        try await Task.sleep(for: .seconds(1))
        let spans = 400
        let script = """
            import sys
            sys.path.insert(0, sys.argv[3])
            from otlp_counting import Counting
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            n = int(sys.argv[2])
            counting = Counting(OTLPSpanExporter(endpoint=sys.argv[1]))
            provider = TracerProvider()
            provider.add_span_processor(BatchSpanProcessor(
                counting, max_queue_size=2 * n, max_export_batch_size=50, schedule_delay_millis=50))
            tracer = provider.get_tracer("slow-clients")
            for i in range(n):
                with tracer.start_as_current_span(f"span {i}"):
                    pass
            provider.force_flush()
            provider.shutdown()
            print(f"exported {counting.sent} spans, {counting.failed} failed")
            sys.exit(1 if counting.failed or counting.sent != n else 0)
            """
        let run: (status: Int32, output: String) = await withCheckedContinuation { done in
            // Off the cooperative pool: the receiver answers from it.
            Thread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: python)
                process.arguments = [
                    "-c", script, "http://\(rx.addresses.http!)/v1/traces", String(spans),
                    Self.repositoryRoot.appendingPathComponent("scripts/fixtures").path,
                ]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                do { try process.run() } catch {
                    done.resume(returning: (-1, "\(error)"))
                    return
                }
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                done.resume(returning: (process.terminationStatus, String(decoding: output, as: UTF8.self)))
            }.start()
        }
        let stillSending = slow.map { $0.sent.load(ordering: .relaxed) }
        for upload in slow { upload.stop() }
        #expect(stillSending.allSatisfy { $0 >= 2 }, "\(stillSending)")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("exported \(spans) spans, 0 failed"), "\(run.output)")
        #expect(try rx.traces().reduce(0) { $0 + $1.spanCount } == spans)
        try await rx.stop()
    }
}
