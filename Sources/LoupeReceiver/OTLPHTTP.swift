import Foundation
import Hummingbird
import LoupeBase
import LoupeKit
import LoupeOTLP
import NIOCore
import SwiftProtobuf

/// OTLP/HTTP (`POST /v1/traces`) on Hummingbird, as the OTLP specification's "OTLP/HTTP" says:
/// protobuf or JSON bodies, gzip or not; 200 with an `ExportTraceServiceResponse` (partial
/// success when spans were rejected) only once the spans are committed; 400 with a
/// `google.rpc.Status` for a body that is no request; 503 with `Retry-After` when the ingest
/// queue is full; 401 without the configured bearer token; 413 past the body limit.
enum OTLPHTTP {
    static func router(configuration: ReceiverConfiguration, ingest: TraceIngest) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.post("v1/traces") { request, _ -> Response in
            await handle(request, configuration: configuration, ingest: ingest)
        }
        return router
    }

    private enum Encoding {
        case protobuf, json

        var contentType: String { self == .json ? "application/json" : "application/x-protobuf" }
    }

    private static func handle(
        _ request: Request, configuration: ReceiverConfiguration, ingest: TraceIngest
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
        // Refused before the body is read when the queue is full: memory stays bounded however
        // many exporters send at once.
        do { try ingest.admit() } catch { return busy(error, encoding: encoding) }
        var admitted = true
        defer { if admitted { ingest.finishedDecoding() } }
        let limit = configuration.maxBodyBytes
        var body: Data
        do {
            // A body that takes longer than this to arrive holds a decode slot no longer.
            let buffer = try await withThrowingTaskGroup(of: ByteBuffer?.self) { reading in
                reading.addTask { try await request.body.collect(upTo: limit) }
                reading.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return nil
                }
                defer { reading.cancelAll() }
                return try await reading.next() ?? nil
            }
            guard let buffer else {
                return failure(.requestTimeout, code: 4, "the body did not arrive within 30 s", encoding: encoding)
            }
            body = Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            return failure(.contentTooLarge, code: 3, "the body is larger than \(limit) bytes", encoding: encoding)
        } catch {
            return failure(.badRequest, code: 3, "the body could not be read: \(error)", encoding: encoding)
        }
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
        let prepared = ingest.prepare(decoded.spans)
        ingest.finishedDecoding()
        admitted = false
        do {
            try await ingest.submit(prepared, source: "OTLP/HTTP")
        } catch {
            return busy(error, encoding: encoding)
        }
        return message(.ok, OTLPDecoding.partialSuccess(decoded.rejected), encoding: encoding)
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
