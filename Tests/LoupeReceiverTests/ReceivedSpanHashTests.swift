import Foundation
import LoupeAgents
import LoupeKit
import LoupeOTLP
import LoupeStore
import SwiftProtobuf
import Testing

/// A received span's content hash reads its protobuf message as it came, not its compressed
/// form decompressed: the two must give the same hash, or a trace received over OTLP would
/// read as changed when the same content comes again from a file whose spans keep only the
/// compressed form.
@Suite struct ReceivedSpanHashTests {
    @Test func aReceivedSpanHashesAsItsCompressedFormReadBack() throws {
        let request = Requests.request(Requests.agentRun())
        let spans = try OTLPDecoding.protobuf(try request.serializedData()).spans
        #expect(spans.count == 3)
        #expect(spans.allSatisfy { $0.span.raw == nil && $0.span.rawProtobuf != nil })
        let trace = OTLPImporter.trace(id: Requests.trace, spans: spans, service: "agent")
        let encoded = Dictionary(
            uniqueKeysWithValues: spans.map { ($0.span.spanID, TraceService.EncodedSpan($0.span)) })
        // The same trace with each span's message dropped once encoded, as a large file's lines are.
        var dropped = trace
        for index in dropped.spans.indices { dropped.spans[index].rawProtobuf = nil }
        let received = TraceService.record(trace, sourceFile: nil, encoded: encoded)
        let readBack = TraceService.record(dropped, sourceFile: nil, encoded: encoded)
        #expect(received.contentHash == readBack.contentHash)
        // And the hash does read the source: another message for one span is another hash.
        var changed = trace
        changed.spans[0].rawProtobuf = Data([1, 2, 3])
        #expect(TraceService.record(changed, sourceFile: nil, encoded: encoded).contentHash != received.contentHash)
    }
}
