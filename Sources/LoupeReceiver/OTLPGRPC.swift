import Foundation
import GRPCCore
import LoupeKit
import LoupeOTLP

/// OTLP/gRPC's `TraceService/Export` on grpc-swift-2: OK with an `ExportTraceServiceResponse`
/// (partial success when spans were rejected) only once the spans are committed;
/// `UNAVAILABLE` when the ingest queue is full (exporters retry it with backoff);
/// `UNAUTHENTICATED` without the configured bearer token.
struct OTLPGRPC: Opentelemetry_Proto_Collector_Trace_V1_TraceService.ServiceProtocol {
    let configuration: ReceiverConfiguration
    let ingest: TraceIngest

    func export(
        request: ServerRequest<Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse> {
        let authorization = request.metadata[stringValues: "authorization"].first { _ in true }
        guard configuration.authorizes(authorization) else {
            throw RPCError(code: .unauthenticated, message: "a bearer token is required")
        }
        do { try ingest.admit() } catch { throw RPCError(code: .unavailable, message: error.description) }
        let decoded = OTLPDecoding.message(request.message)
        let prepared = ingest.prepare(decoded.spans)
        ingest.finishedDecoding()
        do {
            try await ingest.submit(prepared, source: "OTLP/gRPC")
        } catch let refusal as TraceIngest.Refusal {
            throw RPCError(code: .unavailable, message: refusal.description)
        }
        return ServerResponse(message: OTLPDecoding.partialSuccess(decoded.rejected))
    }
}
