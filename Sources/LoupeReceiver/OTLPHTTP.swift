import Foundation
import Hummingbird
import LoupeBase
import LoupeKit
import LoupeOTLP
import NIOCore
import SwiftProtobuf
import Synchronization

/// OTLP/HTTP (`POST /v1/traces`) on Hummingbird, as the OTLP specification's "OTLP/HTTP" says:
/// protobuf or JSON bodies, gzip or not; 200 with an `ExportTraceServiceResponse` (partial
/// success when spans were rejected) only once the spans are committed; 400 with a
/// `google.rpc.Status` for a body that is no request; 503 with `Retry-After` when the ingest
/// queue is full; 401 without the configured bearer token; 413 past the body limit; 408 for a
/// body that arrives too slowly.
///
/// One client must not shut out the others, so a request goes through three gates, in order:
///
/// 1. Its headers: the token and the content type are checked, and a `Content-Length` past the
///    body limit answered 413, before a byte of the body is read.
/// 2. Its body, read whole *before* it takes a decoding slot: each chunk is taken from the
///    ingest's byte budget as it arrives (``TraceIngest/reserve(bytes:)``; past it, 503 with
///    `Retry-After`), so the memory of bodies being read is bounded whatever the number of
///    connections, and a client sending slowly holds only the bytes it sent. A watchdog ends the
///    read with 408, and closes the connection, once the body has taken longer than
///    ``ReceiverConfiguration/bodyDeadline`` or, after ``ReceiverConfiguration/bodyGrace``, has
///    arrived slower on average than ``ReceiverConfiguration/minimumBodyRate``.
/// 3. Decoding: with the body in hand it takes one of the ingest's few decoding slots
///    (``TraceIngest/admit()``) for the CPU work of inflating, decoding and preparing its spans
///    only, then gives the slot and its bytes back and waits for the commit.
enum OTLPHTTP {
    /// A request's context: Hummingbird's, with the connection, so that a body cut short (too
    /// slow) can have its connection closed rather than drained.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let channel: any Channel

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            channel = source.channel
        }
    }

    static func router(configuration: ReceiverConfiguration, ingest: TraceIngest) -> Router<Context> {
        let router = Router(context: Context.self)
        router.post("v1/traces") { request, context -> Response in
            await handle(request, channel: context.channel, configuration: configuration, ingest: ingest)
        }
        return router
    }

    private enum Encoding {
        case protobuf, json

        var contentType: String { self == .json ? "application/json" : "application/x-protobuf" }
    }

    /// Why a body was not read whole.
    private enum Cut: Error {
        case tooLarge
        case tooSlow(bytes: Int, after: Duration)
        case pastDeadline(bytes: Int)
        case refused(TraceIngest.Refusal)
        case unreadable(String)
    }

    /// The bytes of a body read so far, all of them taken from the ingest's byte budget.
    private final class Progress: Sendable {
        let bytes = Atomic<Int>(0)
    }

    private static func handle(
        _ request: Request, channel: any Channel, configuration: ReceiverConfiguration, ingest: TraceIngest
    ) async -> Response {
        // The type decides the answer's encoding too; none given is protobuf, the default.
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
            .lowercased()
        let encoding: Encoding
        switch type {
        case nil, "application/x-protobuf", "application/protobuf": encoding = .protobuf
        case "application/json": encoding = .json
        case let other?:
            return failure(
                .unsupportedMediaType, code: 3,
                "content type \(other) is not application/x-protobuf or application/json",
                encoding: .json)
        }
        guard configuration.authorizes(request.headers[.authorization]) else {
            var response = failure(.unauthorized, code: 16, "a bearer token is required", encoding: encoding)
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        let limit = configuration.maxBodyBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            return failure(.contentTooLarge, code: 3, "the body is larger than \(limit) bytes", encoding: encoding)
        }
        // The bytes read are given back once the spans are prepared (or the request failed).
        let progress = Progress()
        var held = true
        func giveBack() {
            if held { ingest.release(bytes: progress.bytes.load(ordering: .relaxed)) }
            held = false
        }
        defer { giveBack() }
        var body: Data
        do throws(Cut) {
            body = Data(
                try await read(request.body, progress: progress, configuration: configuration, ingest: ingest)
                    .readableBytesView)
        } catch {
            switch error {
            case .tooLarge:
                return failure(.contentTooLarge, code: 3, "the body is larger than \(limit) bytes", encoding: encoding)
            case .refused(let refusal):
                return busy(refusal, encoding: encoding)
            case .unreadable(let why):
                return failure(.badRequest, code: 3, "the body could not be read: \(why)", encoding: encoding)
            case .tooSlow(let bytes, let after):
                return cut(
                    "the body arrived too slowly: \(bytes) bytes in \(after), under \(configuration.minimumBodyRate) bytes/s",
                    channel: channel, encoding: encoding)
            case .pastDeadline(let bytes):
                return cut(
                    "the body did not arrive within \(configuration.bodyDeadline) (\(bytes) bytes read)",
                    channel: channel, encoding: encoding)
            }
        }
        // The body is whole: only now does it take a decoding slot, for the CPU work alone.
        do { try ingest.admit() } catch { return busy(error, encoding: encoding) }
        var admitted = true
        defer { if admitted { ingest.finishedDecoding() } }
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity": break
        case "gzip":
            do { body = try Gzip.decompress(body, limit: limit) } catch {
                let status: HTTPResponse.Status = if case .tooLarge = error { .contentTooLarge } else { .badRequest }
                return failure(status, code: 3, "\(error)", encoding: encoding)
            }
        case let other?:
            return failure(
                .unsupportedMediaType, code: 3, "content encoding \(other) is not gzip or identity", encoding: encoding)
        }
        let decoded: OTLPDecoding.Decoded
        do {
            decoded = try encoding == .json ? OTLPDecoding.json(body) : OTLPDecoding.protobuf(body)
        } catch {
            return failure(.badRequest, code: 3, error.description, encoding: encoding)
        }
        body = Data()
        let prepared = ingest.prepare(decoded.spans)
        ingest.finishedDecoding()
        admitted = false
        giveBack()
        do {
            try await ingest.submit(prepared, source: "OTLP/HTTP")
        } catch {
            return busy(error, encoding: encoding)
        }
        return message(.ok, OTLPDecoding.partialSuccess(decoded.rejected), encoding: encoding)
    }

    /// Reads a body whole, each chunk taken from the ingest's byte budget as it arrives, while a
    /// watchdog ends the read once it is past the deadline or, after the grace, too slow.
    private static func read(
        _ body: RequestBody, progress: Progress, configuration: ReceiverConfiguration, ingest: TraceIngest
    ) async throws(Cut) -> ByteBuffer {
        let limit = configuration.maxBodyBytes
        let started = ContinuousClock.now
        do {
            return try await withThrowingTaskGroup(of: ByteBuffer.self) { reading in
                reading.addTask {
                    var buffer = ByteBuffer()
                    for try await var chunk in body {
                        guard buffer.readableBytes + chunk.readableBytes <= limit else { throw Cut.tooLarge }
                        do throws(TraceIngest.Refusal) {
                            try ingest.reserve(bytes: chunk.readableBytes)
                        } catch {
                            throw Cut.refused(error)
                        }
                        progress.bytes.add(chunk.readableBytes, ordering: .relaxed)
                        buffer.writeBuffer(&chunk)
                    }
                    return buffer
                }
                reading.addTask {
                    // Checked four times a second: a cut comes at most that late.
                    while true {
                        try await Task.sleep(for: .milliseconds(250))
                        let elapsed = ContinuousClock.now - started
                        let bytes = progress.bytes.load(ordering: .relaxed)
                        if elapsed > configuration.bodyDeadline { throw Cut.pastDeadline(bytes: bytes) }
                        let seconds =
                            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                        if elapsed > configuration.bodyGrace
                            && Double(bytes) < Double(configuration.minimumBodyRate) * seconds
                        {
                            throw Cut.tooSlow(bytes: bytes, after: elapsed)
                        }
                    }
                }
                defer { reading.cancelAll() }
                guard let buffer = try await reading.next() else { throw Cut.pastDeadline(bytes: 0) }
                return buffer
            }
        } catch let cut as Cut {
            throw cut
        } catch {
            throw Cut.unreadable("\(error)")
        }
    }

    /// 408 for a body cut short; the connection's input is closed so the rest of the body is not
    /// drained (and the client, which may never finish it, is let go).
    private static func cut(_ text: String, channel: any Channel, encoding: Encoding) -> Response {
        channel.close(mode: .input, promise: nil)
        var response = failure(.requestTimeout, code: 4, text, encoding: encoding)
        response.headers[.connection] = "close"
        return response
    }

    /// 503 with `Retry-After`: the exporter backs off and sends again.
    private static func busy(_ error: any Error, encoding: Encoding) -> Response {
        var response = failure(.serviceUnavailable, code: 14, "\(error)", encoding: encoding)
        response.headers[.retryAfter] = "1"
        return response
    }

    private static func failure(
        _ status: HTTPResponse.Status, code: Int32, _ text: String, encoding: Encoding
    ) -> Response {
        var message = Google_Rpc_Status()
        message.code = code
        message.message = text
        return Self.message(status, message, encoding: encoding)
    }

    private static func message(_ status: HTTPResponse.Status, _ message: some Message, encoding: Encoding) -> Response
    {
        // Serialising a message we built cannot fail (proto3 has no required fields); were it
        // to, the status line still answers, with an empty body.
        let bytes: [UInt8] =
            switch encoding {
            case .protobuf: (try? message.serializedBytes()) ?? []
            case .json: (try? message.jsonUTF8Bytes()) ?? Array("{}".utf8)
            }
        return Response(
            status: status, headers: [.contentType: encoding.contentType],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
