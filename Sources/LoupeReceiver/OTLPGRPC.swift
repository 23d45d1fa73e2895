import Foundation
import GRPCCore
import GRPCProtobuf
import LoupeKit
import LoupeOTLP
import Synchronization

/// OTLP/gRPC's `TraceService/Export` on grpc-swift-2: OK with an `ExportTraceServiceResponse`
/// (partial success when spans were rejected) only once the spans are committed;
/// `UNAVAILABLE` when the ingest is full (exporters retry it with backoff);
/// `UNAUTHENTICATED` without the configured bearer token.
///
/// Registered by hand rather than through the generated service protocol, for two reasons that
/// both come from how grpc-swift-2 runs an RPC:
///
/// - The handler is called as soon as the request's headers have arrived, with its message still
///   to come (a lazy sequence; GRPCCore's `ServerRPCExecutor` deserializes a message only when it
///   is pulled). The token is checked there, before the message is pulled, and an unauthenticated
///   RPC ends at once: its stream is closed and the rest of its message is dropped by the HTTP/2
///   layer rather than buffered. (The generated protocol's unary `export` is called only once the
///   whole message has been collected and decoded.)
/// - Below that, the transport (GRPCNIOTransportHTTP2's `GRPCServerStreamHandler`) buffers each
///   message of an open stream whole, whether or not anyone asks for it: its deframer keeps the
///   bytes until the message is complete, and HTTP/2 flow control is replenished as frames arrive.
///   That is bounded per message by `maxRequestPayloadSize` (the body limit), and only for
///   authenticated clients. The message's bytes are then taken from the ingest's byte budget and
///   one of its decoding slots, the ones OTLP/HTTP draws on, by the deserializer
///   (``AdmittingDeserializer``), so that decoding is counted in the same admission as HTTP's and
///   a request refused there is answered `UNAVAILABLE` before it is decoded.
struct OTLPGRPC: RegistrableRPCService {
    typealias Request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest
    typealias Response = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse

    let configuration: ReceiverConfiguration
    let ingest: TraceIngest

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(
            forMethod: Opentelemetry_Proto_Collector_Trace_V1_TraceService.Method.Export.descriptor,
            deserializer: AdmittingDeserializer(ingest: ingest),
            serializer: ProtobufSerializer<Response>(),
            handler: { request, context in
                StreamingServerResponse(single: try await export(request))
            })
    }

    func export(_ request: StreamingServerRequest<Admitted>) async throws -> ServerResponse<Response> {
        // Before the message is pulled (deserialized, admitted): see the type's comment.
        let authorization = request.metadata[stringValues: "authorization"].first { _ in true }
        guard configuration.authorizes(authorization) else {
            throw RPCError(code: .unauthenticated, message: "a bearer token is required")
        }
        var messages = request.messages.makeAsyncIterator()
        guard let admitted = try await messages.next() else {
            throw RPCError(code: .invalidArgument, message: "Export takes one request message; none was sent")
        }
        let decoded = admitted.decoded
        let prepared = ingest.prepare(decoded.spans)
        admitted.release()
        guard try await messages.next() == nil else {
            throw RPCError(code: .invalidArgument, message: "Export takes one request message; more were sent")
        }
        do {
            try await ingest.submit(prepared, source: "OTLP/gRPC")
        } catch let refusal as TraceIngest.Refusal {
            throw RPCError(code: .unavailable, message: refusal.description)
        }
        return ServerResponse(message: OTLPDecoding.partialSuccess(decoded.rejected))
    }

    /// A request message read into spans (those rejected named for the partial success), holding
    /// its bytes in the ingest's byte budget and a decoding slot, both given back by ``release()``
    /// (or when it is dropped, whatever ended its RPC).
    final class Admitted: Sendable {
        let decoded: OTLPDecoding.Decoded
        private let ingest: TraceIngest
        private let bytes: Int
        private let held = Atomic(true)

        fileprivate init(decoded: OTLPDecoding.Decoded, ingest: TraceIngest, bytes: Int) {
            self.decoded = decoded
            self.ingest = ingest
            self.bytes = bytes
        }

        func release() {
            guard held.exchange(false, ordering: .acquiringAndReleasing) else { return }
            ingest.finishedDecoding()
            ingest.release(bytes: bytes)
        }

        deinit { release() }
    }

    /// Decodes a message that the transport has in hand only once it has its bytes in the
    /// ingest's byte budget and a decoding slot; `UNAVAILABLE` when either is full. Read as
    /// OTLP/HTTP reads a protobuf body (``OTLPDecoding/protobuf(bytes:)``): a span protobuf
    /// refuses is rejected in the partial success, not the whole request; a message that is no
    /// request is `INVALID_ARGUMENT`, saying why.
    struct AdmittingDeserializer: MessageDeserializer {
        let ingest: TraceIngest

        func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Admitted {
            let count = serializedMessageBytes.count
            do { try ingest.reserve(bytes: count) } catch {
                throw RPCError(code: .unavailable, message: error.description)
            }
            do { try ingest.admit() } catch {
                ingest.release(bytes: count)
                throw RPCError(code: .unavailable, message: error.description)
            }
            let decoded = serializedMessageBytes.withUnsafeBytes { bytes in
                Result { () throws(OTLPDecoding.Malformed) in try OTLPDecoding.protobuf(bytes: bytes) }
            }
            switch decoded {
            case .success(let decoded):
                return Admitted(decoded: decoded, ingest: ingest, bytes: count)
            case .failure(let malformed):
                ingest.finishedDecoding()
                ingest.release(bytes: count)
                throw RPCError(code: .invalidArgument, message: malformed.description)
            }
        }
    }
}
