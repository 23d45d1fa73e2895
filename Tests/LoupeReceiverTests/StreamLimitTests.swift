import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import LoupeBase
import LoupeOTLP
import Testing

@testable import LoupeReceiver

#if canImport(Glibc)
    import Glibc
#endif

/// What a raw HTTP/2 client saw: the server's SETTINGS_MAX_CONCURRENT_STREAMS, and the error
/// code of the GOAWAY that ended its connection, if one came.
struct RawHTTP2Outcome: Sendable {
    var advertisedLimit: UInt32?
    var goAwayError: UInt32?
    var failure: String?
}

/// A client that speaks HTTP/2 by hand, on a thread of its own: it acknowledges the server's
/// SETTINGS, then opens `streams` gRPC Export calls at once, sending each one's headers and
/// nothing more (so each stays open, its handler waiting for the message), as a client ignoring
/// the server's stream limit would.
enum RawHTTP2Client {
    static let path = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

    static func openStreams(port: Int, streams: Int) async -> RawHTTP2Outcome {
        await withCheckedContinuation { done in
            Thread { done.resume(returning: run(port: port, streams: streams)) }.start()
        }
    }

    private static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + payload
    }

    /// The request's headers in HPACK: static-table entries and literals without indexing, no Huffman.
    private static var headerBlock: [UInt8] {
        func literal(_ bytes: String) -> [UInt8] { [UInt8(bytes.utf8.count)] + Array(bytes.utf8) }
        return [0x83, 0x86]  // :method POST, :scheme http
            + [0x04] + literal(path)  // :path, indexed name 4
            + [0x01] + literal("x")  // :authority, indexed name 1
            + [0x0F, 0x10] + literal("application/grpc")  // content-type, indexed name 31
            + [0x00] + literal("te") + literal("trailers")
    }

    private static func run(port: Int, streams: Int) -> RawHTTP2Outcome {
        var outcome = RawHTTP2Outcome()
        guard let fd = LoopbackPort.connect(port) else {
            outcome.failure = "cannot connect to \(port)"
            return outcome
        }
        defer { close(fd) }
        // A server that never answers fails the test rather than hanging it.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func write(_ bytes: [UInt8]) -> Bool { send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count }
        func read(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var got = 0
            while got < count {
                let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
                if n <= 0 { return nil }
                got += n
            }
            return bytes
        }
        func readFrame() -> (type: UInt8, flags: UInt8, payload: [UInt8])? {
            guard let head = read(9) else { return nil }
            let length = Int(head[0]) << 16 | Int(head[1]) << 8 | Int(head[2])
            guard let payload = length == 0 ? [] : read(length) else { return nil }
            return (head[3], head[4], payload)
        }
        func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(0) { $0 << 8 | UInt32($1) } }

        guard write(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 4, flags: 0, stream: 0)) else {
            outcome.failure = "cannot send the preface"
            return outcome
        }
        // The server's SETTINGS, acknowledged: from then on it holds this client to them.
        while outcome.advertisedLimit == nil {
            guard let frame = readFrame() else {
                outcome.failure = "the connection ended before the server's SETTINGS"
                return outcome
            }
            guard frame.type == 4, frame.flags & 1 == 0 else { continue }
            for at in stride(from: 0, to: frame.payload.count - 5, by: 6)
            where frame.payload[at + 1] == 3
                && frame.payload[at] == 0
            {
                outcome.advertisedLimit = uint32(frame.payload[(at + 2)..<(at + 6)])
            }
            if outcome.advertisedLimit == nil {
                outcome.failure = "the server's SETTINGS carry no SETTINGS_MAX_CONCURRENT_STREAMS"
                return outcome
            }
        }
        var opening = frame(type: 4, flags: 1, stream: 0)
        for i in 0..<streams { opening += frame(type: 1, flags: 4, stream: UInt32(2 * i + 1), headerBlock) }
        guard write(opening) else {
            outcome.failure = "cannot open the streams"
            return outcome
        }
        while let frame = readFrame() {
            if frame.type == 7, frame.payload.count >= 8 {
                outcome.goAwayError = uint32(frame.payload[4..<8])
                return outcome
            }
        }
        outcome.failure = "the connection ended (or timed out) without a GOAWAY"
        return outcome
    }
}

/// Issue 64: one gRPC connection cannot open calls without bound (each holds a handler waiting
/// for its message).
@Suite(.serialized) struct StreamLimitTests {
    typealias Request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest

    /// A client opening one stream past the limit is refused (its connection ended with a
    /// protocol error); a well-behaved client beside it, asking for more calls at once than the
    /// limit, has them queued on its side and every one answered.
    @Test func streamsPastTheLimitAreRefusedAndOthersStillServed() async throws {
        let rx = try await RunningReceiver { $0.maxConcurrentStreams = 3 }
        let port = try SlowClientTests.port(rx.addresses.grpc)
        let rogue = await RawHTTP2Client.openStreams(port: port, streams: 4)
        #expect(rogue.failure == nil, "\(rogue.failure ?? "")")
        #expect(rogue.advertisedLimit == 3)
        // The fourth stream is a PROTOCOL_ERROR (1): that client's connection ends.
        #expect(rogue.goAwayError == 1)

        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let service = Opentelemetry_Proto_Collector_Trace_V1_TraceService.Client(wrapping: client)
            try await withThrowingTaskGroup(of: Void.self) { calls in
                for i in 0..<8 {
                    let trace = "abcdef" + String(repeating: "0", count: 25) + String(i)
                    calls.addTask { _ = try await service.export(Requests.request(Requests.agentRun(trace: trace))) }
                }
                try await calls.waitForAll()
            }
        }
        #expect(try rx.traces().count == 8)
        try await rx.stop()
    }

    @Test func theLimitsAreValidated() throws {
        var configuration = ReceiverConfiguration()
        configuration.maxConcurrentStreams = 0
        #expect(throws: ReceiverConfiguration.Invalid.self) { try configuration.validated() }
        configuration = ReceiverConfiguration()
        configuration.bodyBudgetBytes = configuration.maxBodyBytes - 1
        #expect(throws: ReceiverConfiguration.Invalid.self) { try configuration.validated() }
        configuration = ReceiverConfiguration()
        configuration.bodyGrace = configuration.bodyDeadline
        #expect(throws: ReceiverConfiguration.Invalid.self) { try configuration.validated() }
        #expect(try ReceiverConfiguration().validated().maxConcurrentStreams == 100)
    }
}
