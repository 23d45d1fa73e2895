import Foundation
import LoupeAgents
import LoupeBase

extension TraceService {
    /// A trace read from a file, with the stored form of those of its spans the reader made as
    /// it went.
    package struct ReadTrace: Sendable {
        package var trace: Trace
        package var file: String
        package var encoded: [String: EncodedSpan] = [:]
    }

    /// The traces of an OTLP JSON Lines file, read a block of lines at a time: each span is put
    /// in its stored form (payload JSON, compressed source) on the core that parsed its line,
    /// and only what grouping and the trace's row need is kept of it. Memory holds the stored
    /// form instead of the whole file and its parse trees. One request spread over lines
    /// (pretty-printed) larger than a block is walked span by span. Nil when the file is
    /// another format, or such a request smaller than a block: those files are read whole.
    ///
    /// - Parameter blockBytes: about how much of the file is parsed at once.
    package static func otlpLines(
        _ path: String, blockBytes: Int = 8 << 20, progress: (_ fraction: Double) -> Void = { _ in }
    ) throws -> [ReadTrace]? {
        let blocks = try LineBlocks(path: path, blockBytes: blockBytes)
        guard let first = try blocks.next(), TraceImport.detect(Data(first.bytes.prefix(1 << 16)), file: path) == .otlp
        else { return nil }
        let spread = !JSONLines.firstLineIsWhole(first.bytes)
        // One request spread over lines: small ones are read whole, large ones walked.
        if spread && blocks.size < blockBytes { return nil }
        /// Each span read, as the trace keeps it, and the stored forms of every span of each id
        /// (an exporter's retry sends a span twice; the tree keeps one of them).
        struct Grouped {
            var spans: [OTLPImporter.OTLPSpan] = []
            var encoded: [String: [(at: Int, encoded: EncodedSpan)]] = [:]
        }
        var order: [String] = []
        var traces: [String: Grouped] = [:]
        var services: [String: String] = [:]
        let stored: @Sendable (OTLPImporter.OTLPSpan) -> (OTLPImporter.OTLPSpan, EncodedSpan) = {
            (withoutContent($0), EncodedSpan($0.span))
        }
        var block: (bytes: [UInt8], firstLine: Int)? = spread ? (try TextFile.bytes(path), 0) : first
        while let current = block {
            progress(Double(blocks.offset) / Double(max(1, blocks.size, blocks.offset)))
            let read: [[(OTLPImporter.OTLPSpan, EncodedSpan)]]
            if spread {
                read = [try OTLPImporter.largeRequest(current.bytes, file: path, line: nil, stored)]
            } else if current.bytes.count >= blockBytes, let line = JSONLines.onlyLine(current.bytes),
                line.range.count >= blockBytes
            {
                // A request too large to parse whole: its spans are found and parsed one by one.
                read = [
                    try OTLPImporter.largeRequest(
                        current.bytes, in: line.range, file: path, line: current.firstLine + line.index, stored)
                ]
            } else {
                read = try JSONLines.map(lines: current.bytes, file: path, firstLine: current.firstLine) {
                    (number, body) throws(TraceImportError) -> [(OTLPImporter.OTLPSpan, EncodedSpan)] in
                    let request = try OTLPImporter.spans(in: body, file: path, line: number)
                    if let first = request.rejected.first { throw first }
                    return request.read.map(stored)
                }
            }
            for (found, encoded) in read.joined() {
                if traces[found.traceID] == nil {
                    order.append(found.traceID)
                    if let service = found.service { services[found.traceID] = service }
                }
                traces[found.traceID, default: Grouped()].encoded[found.span.spanID, default: []].append(
                    (traces[found.traceID]?.spans.count ?? 0, encoded))
                traces[found.traceID]!.spans.append(found)
            }
            block = spread ? nil : try blocks.next()
        }
        // Each trace's tree is made on every core (they are independent); the groups are handed
        // over in order, so each is let go where its trace was made.
        let groups = order.map { id in (id: id, grouped: traces.removeValue(forKey: id)!, service: services[id]) }
        return parallelMap(groups) { group in
            let trace = OTLPImporter.trace(id: group.id, spans: group.grouped.spans, service: group.service)
            var encoded: [String: EncodedSpan] = [:]
            for span in trace.spans {
                let forms = group.grouped.encoded[span.spanID]!
                // The form of the span the tree kept (a span left without its parent in a cycle
                // has lost its parent id); a span read once has one form.
                let kept =
                    forms.count == 1
                    ? forms[0]
                    : forms.first {
                        var read = group.grouped.spans[$0.at].span
                        read.parentID = span.parentID
                        return read == span
                    }
                encoded[span.spanID] = (kept ?? forms[0]).encoded
            }
            return ReadTrace(trace: trace, file: path, encoded: encoded)
        }
    }

    /// What the trace and its rows read of a span once its stored form is made: not its
    /// messages, tool arguments and result, or source.
    private static func withoutContent(_ found: OTLPImporter.OTLPSpan) -> OTLPImporter.OTLPSpan {
        var light = found
        light.span.input = []
        light.span.output = []
        light.span.raw = nil
        light.span.rawProtobuf = nil
        if light.span.tool != nil {
            light.span.tool?.arguments = ""
            light.span.tool?.result = nil
        }
        return light
    }
}
