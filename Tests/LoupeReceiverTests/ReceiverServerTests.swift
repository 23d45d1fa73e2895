import Foundation
import GRDB
import GRPCCore
import GRPCNIOTransportHTTP2
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeOTLP
import LoupeStore
import SwiftProtobuf
import Testing

@testable import LoupeOTLP
@testable import LoupeReceiver

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A receiver on free loopback ports over a fresh workspace, stopped and drained at the end.
final class RunningReceiver: Sendable {
    let receiver: TraceReceiver
    let workspace: Workspace
    let path: String
    let addresses: TraceReceiver.Addresses
    private let served: Task<Void, any Error>

    init(
        token: String? = nil, maxBodyBytes: Int = 32 << 20, capacity: Int = 65_536, busyTimeout: Double = 10,
        configure: (inout ReceiverConfiguration) -> Void = { _ in }
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-rx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("w.sqlite").path
        workspace = try Workspace(path: path, busyTimeout: busyTimeout)
        var configuration = ReceiverConfiguration()
        configuration.httpPort = 0
        configuration.grpcPort = 0
        configuration.token = token
        configuration.maxBodyBytes = maxBodyBytes
        configure(&configuration)
        let receiver = try TraceReceiver(
            configuration: configuration, ingest: TraceIngest(workspace: workspace, capacity: capacity))
        self.receiver = receiver
        let (listening, told) = AsyncStream.makeStream(of: TraceReceiver.Addresses.self)
        served = Task {
            defer { told.finish() }
            try await receiver.run { told.yield($0) }
        }
        var bound: TraceReceiver.Addresses?
        for await addresses in listening {
            bound = addresses
            break
        }
        guard let bound else {
            try await served.value
            throw CocoaError(.featureUnsupported)
        }
        addresses = bound
    }

    func stop() async throws {
        await receiver.stop()
        try await served.value
        receiver.ingest.drain()
    }

    /// POSTs `body` to /v1/traces; the status, headers and body of the answer.
    func post(
        _ body: Data, type: String = "application/x-protobuf", headers: [String: String] = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: URL(string: "http://\(addresses.http!)/v1/traces")!)
        request.httpMethod = "POST"
        request.setValue(type, forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        // The receiver answers from Swift's cooperative pool, which has one thread a core: on a
        // 2-core machine running the whole suite, two synchronous tests blocking theirs (a
        // notebook, a binary under test) can keep it from answering for minutes. Seen once as
        // URLSession's 60 s timeout; a slow answer is not what these tests are about.
        request.timeoutInterval = 900
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields["\(name)".lowercased()] = "\(value)" }
        return (http.statusCode, fields, data)
    }

    func traces() throws -> [TraceSummary] { try workspace.traces.traceSummaries() }
}

extension RunningReceiver {
    /// Takes the workspace's write lock on another connection (`BEGIN IMMEDIATE`) and holds it
    /// until the returned closure is called, so the receiver's writer waits and requests queue.
    /// Make the receiver with a `busyTimeout` longer than the test can be kept from running (the
    /// cooperative pool starved by the rest of the suite): a writer that gives up on the lock
    /// answers busy, and the queue the test waits for never forms.
    func holdWriteLock() throws -> @Sendable () -> Void {
        let blocker = try DatabaseQueue(path: path)
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? blocker.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                holding.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
        }
        holder.start()
        holding.wait()
        return { release.signal() }
    }
}

/// A wait that gave up: what was awaited, and for how long.
struct WaitedTooLong: Error, CustomStringConvertible {
    var description: String
}

/// Waits until `condition` holds, looking every 5 ms; after `seconds` it throws rather than let
/// the suite hang.
func waitUntil(_ what: String, seconds: Double = 600, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            throw WaitedTooLong(description: "waited \(seconds) s for \(what)")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

@Suite(.serialized) struct ReceiverServerTests {
    typealias Response = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse

    @Test func httpAcknowledgesOnlyWhatIsStoredAndAResentBatchChangesNothing() async throws {
        let rx = try await RunningReceiver()
        let body = try Requests.request(Requests.agentRun()).serializedData()
        let first = try await rx.post(body)
        #expect(first.status == 200)
        #expect(first.headers["content-type"] == "application/x-protobuf")
        #expect(try Response(serializedBytes: first.body).hasPartialSuccess == false)
        // Acknowledged means committed: the trace is there the moment the answer is.
        let stored = try rx.traces()
        #expect(stored.count == 1)
        #expect(stored.first?.externalID == Requests.trace)
        #expect(stored.first?.name == "invoke_agent weather")
        #expect(stored.first?.spanCount == 3)
        #expect(stored.first?.inputTokens == 42)
        let again = try await rx.post(body)
        #expect(again.status == 200)
        #expect(try rx.traces() == stored)
        try await rx.stop()
    }

    @Test func aTraceGrowsAsItsSpansArriveInAnyOrder() async throws {
        let rx = try await RunningReceiver()
        let spans = Requests.agentRun()
        // The tool call, then the chat call, then the root: children before their parent.
        for (i, span) in [spans[1], spans[0], spans[2]].enumerated() {
            let answer = try await rx.post(try Requests.request([span]).serializedData())
            #expect(answer.status == 200)
            let traces = try rx.traces()
            #expect(traces.count == 1)
            #expect(traces.first?.spanCount == i + 1)
        }
        let trace = try TraceService(workspace: rx.workspace).trace(try #require(rx.traces().first?.id))
        // Put together in tree order: the root first, its children by start time.
        #expect(trace.spans.map(\.name) == ["invoke_agent weather", "chat gpt-4o-mini", "execute_tool get_weather"])
        #expect(trace.name == "invoke_agent weather")
        #expect(trace.metadata["service.name"] == .string("agent"))
        try await rx.stop()
    }

    @Test func jsonAndGzipBodiesAndPartialSuccess() async throws {
        let rx = try await RunningReceiver()
        let json = """
            {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"js"}}]},
            "scopeSpans":[{"spans":[
            {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"chat",
             "startTimeUnixNano":"1763900000000000000","endTimeUnixNano":"1763900001000000000",
             "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]},
            {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad","name":"short id",
             "startTimeUnixNano":"1763900000000000000"}]}]}]}
            """
        let answer = try await rx.post(Data(json.utf8), type: "application/json; charset=utf-8")
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/json")
        let response = try Response(jsonUTF8Data: answer.body)
        #expect(response.partialSuccess.rejectedSpans == 1)
        #expect(response.partialSuccess.errorMessage.contains("spans[1].spanId: \"b7ad\" is not 16 hex digits"))
        #expect(try rx.traces().map(\.spanCount) == [1])

        let packed = try gzip(try Requests.request(Requests.agentRun()).serializedData())
        let gzipped = try await rx.post(packed, headers: ["Content-Encoding": "gzip"])
        #expect(gzipped.status == 200)
        #expect(try rx.traces().count == 2)
        try await rx.stop()
    }

    @Test func malformedOversizedAndUnauthorizedRequestsStoreNothing() async throws {
        let rx = try await RunningReceiver(token: "s3cret", maxBodyBytes: 64 << 10)
        let bearer = ["Authorization": "Bearer s3cret"]
        let valid = try Requests.request(Requests.agentRun()).serializedData()

        let anonymous = try await rx.post(valid)
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"] == "Bearer")
        let wrong = try await rx.post(valid, headers: ["Authorization": "Bearer guess"])
        #expect(wrong.status == 401)

        let garbage = try await rx.post(Data("not protobuf at all \u{1}\u{2}".utf8), headers: bearer)
        #expect(garbage.status == 400)
        let status = try Google_Rpc_Status(serializedBytes: garbage.body)
        #expect(status.code == 3)
        #expect(status.message.hasPrefix("the body is not a protobuf ExportTraceServiceRequest"))

        let wrongTypes = try await rx.post(
            Data(#"{"resourceSpans":{"a":1}}"#.utf8), type: "application/json", headers: bearer)
        #expect(wrongTypes.status == 400)
        #expect(try Google_Rpc_Status(jsonUTF8Data: wrongTypes.body).message.contains("resourceSpans"))

        let huge = try await rx.post(Data(repeating: 0x0A, count: 200 << 10), headers: bearer)
        #expect(huge.status == 413)
        // A small body that inflates past the limit is refused as it inflates.
        let bomb = try await rx.post(
            try gzip(Data(repeating: 0, count: 10 << 20)),
            headers: bearer.merging(["Content-Encoding": "gzip"]) { a, _ in a })
        #expect(bomb.status == 413)
        let text = try await rx.post(valid, type: "text/plain", headers: bearer)
        #expect(text.status == 415)
        #expect(try rx.traces().isEmpty)

        let allowed = try await rx.post(valid, headers: bearer)
        #expect(allowed.status == 200)
        #expect(try rx.traces().count == 1)
        try await rx.stop()
    }

    /// The writer is held by another connection's write transaction, so the first request waits
    /// in the queue; the second would pass the queue's capacity and is refused at once with
    /// 503 and Retry-After. Once the lock goes, the first is committed and acknowledged.
    @Test func aFullQueueAnswers503AndLosesNothingItAcknowledged() async throws {
        let rx = try await RunningReceiver(capacity: 3, busyTimeout: 900)
        let release = try rx.holdWriteLock()
        let first = Task { try await rx.post(try Requests.request(Requests.agentRun()).serializedData()) }
        try await waitUntil("the first request to queue") { rx.receiver.ingest.statistics.queued > 0 }
        let other = Requests.agentRun(trace: "0af7651916cd43dd8448eb211c80319c")
        let refused = try await rx.post(try Requests.request(other).serializedData())
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(try Google_Rpc_Status(serializedBytes: refused.body).message.hasPrefix("busy: 3 spans are waiting"))
        release()
        let acknowledged = try await first.value
        #expect(acknowledged.status == 200)
        #expect(try rx.traces().map(\.externalID) == [Requests.trace])
        #expect(rx.receiver.ingest.statistics.refused == 1)
        try await rx.stop()
    }

    @Test func grpcExportStoresAndRequiresTheToken() async throws {
        let rx = try await RunningReceiver(token: "s3cret")
        let port = try #require(rx.addresses.grpc.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) })
        var spans = Requests.agentRun()
        spans[0].spanID = Data([1, 2])
        let request = Requests.request(spans)
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let service = Opentelemetry_Proto_Collector_Trace_V1_TraceService.Client(wrapping: client)
            await #expect(throws: RPCError.self) { try await service.export(request) }
            do {
                _ = try await service.export(request, metadata: ["authorization": "Bearer nope"])
                Issue.record("a wrong token was accepted")
            } catch let error as RPCError {
                #expect(error.code == .unauthenticated)
            }
            let response = try await service.export(request, metadata: ["authorization": "Bearer s3cret"])
            #expect(response.partialSuccess.rejectedSpans == 1)
            #expect(response.partialSuccess.errorMessage.contains("spanId: \"0102\" is not 16 hex digits"))
        }
        #expect(try rx.traces().map(\.spanCount) == [2])
        try await rx.stop()
    }

    /// One span whose name is not UTF-8 (proto3 refuses the whole message for it): over HTTP and
    /// gRPC alike its neighbours are stored and it is named in the partial success. A JSON list
    /// where an object belongs is answered 400 naming the field, and stores nothing.
    @Test func aSpanThatIsNotUTF8IsRejectedAloneOverHTTPAndGRPC() async throws {
        let rx = try await RunningReceiver()
        func broken(trace: String) throws -> Data {
            var bytes = try Requests.request(Requests.agentRun(trace: trace)).serializedBytes() as [UInt8]
            let name = Array("invoke_agent weather".utf8)
            let at = try #require(bytes.indices.first { Array(bytes[$0..<min(bytes.count, $0 + name.count)]) == name })
            bytes[at + 13] = 0xFF
            return Data(bytes)
        }
        let expected =
            "1 span rejected: resourceSpans[0].scopeSpans[0].spans[2]: is not a valid Span: "
            + "has a string that is not valid UTF-8"
        let answer = try await rx.post(try broken(trace: Requests.trace))
        #expect(answer.status == 200)
        let response = try Response(serializedBytes: answer.body)
        #expect(response.partialSuccess.rejectedSpans == 1)
        #expect(response.partialSuccess.errorMessage == expected)
        #expect(try rx.traces().map(\.spanCount) == [2])

        let port = try #require(rx.addresses.grpc.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) })
        let sent = try broken(trace: "0af7651916cd43dd8448eb211c80319c")
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            // The message's bytes as they are: a Swift string cannot hold what is not UTF-8.
            let grpc = try await client.unary(
                request: ClientRequest(message: [UInt8](sent)),
                descriptor: Opentelemetry_Proto_Collector_Trace_V1_TraceService.Method.Export.descriptor,
                serializer: RawMessage(), deserializer: Coder<Response>(), options: .defaults
            ) { try $0.message }
            #expect(grpc.partialSuccess.rejectedSpans == 1)
            #expect(grpc.partialSuccess.errorMessage == expected)
        }
        #expect(try rx.traces().map(\.spanCount) == [2, 2])

        let shape = try await rx.post(Data(#"{"resourceSpans": [[[]]]}"#.utf8), type: "application/json")
        #expect(shape.status == 400)
        #expect(
            try Google_Rpc_Status(jsonUTF8Data: shape.body).message
                == "the JSON body is not an ExportTraceServiceRequest: "
                + "resourceSpans[0] is a list, not a ResourceSpans object"
        )
        #expect(try rx.traces().count == 2)
        try await rx.stop()
    }

    /// Gzip made by the system's gzip program, as an exporter's zlib makes it.
    private func gzip(_ data: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(data)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let packed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return packed
    }
}

/// A message sent as the bytes given, unchecked.
struct RawMessage: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
}
