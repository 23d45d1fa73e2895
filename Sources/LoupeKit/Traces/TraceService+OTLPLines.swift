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

    /// How much of an input's start tells its format: the first line's first 64 KiB, or a whole
    /// document of up to 1 MiB (`TraceImport.detect` reads no more), and one byte to see past it.
    static let headBytes = (1 << 20) + 1

    /// The traces of `path` in any format, read once (standard input cannot be read twice) and
    /// within the input limit: the format is told from the start of the input, so a file that
    /// is no trace is refused without reading the rest; OTLP JSON Lines is read a block at a time
    /// (``otlpLines(_:blockBytes:progress:)``), other formats whole.
    ///
    /// - Parameter limitBytes: the most read of the input; nil for the input limit.
    /// - Parameter checkCancellation: called between blocks; throws to stop the read.
    package static func readTraces(
        _ path: String, blockBytes: Int = 8 << 20, limitBytes: Int? = nil,
        progress: (_ fraction: Double) -> Void = { _ in }, checkCancellation: () throws -> Void = {}
    ) throws -> [ReadTrace] {
        let blocks = try LineBlocks(path: path, blockBytes: blockBytes, limitBytes: limitBytes)
        _ = try blocks.skipByteOrderMark()
        let head = Data(try blocks.peek(headBytes))
        switch TraceImport.detect(head, file: path) {
        case .otlp:
            return try otlpLines(
                blocks, path: path, blockBytes: blockBytes, readsSmallDocuments: true, progress: progress,
                checkCancellation: checkCancellation) ?? []
        case nil, .loupe:
            // Said from the start alone: the same words as the whole-file reader's.
            _ = try TraceImport.traces(head, file: path)
            return []
        default:
            return try TraceImport.traces(Data(try blocks.remaining()), file: path).map {
                ReadTrace(trace: $0, file: path)
            }
        }
    }

    /// The traces of an OTLP JSON Lines file, read a block of lines at a time: each span is put
    /// in its stored form (payload JSON, compressed source) on the core that parsed its line,
    /// and only what grouping and the trace's row need is kept of it. Memory holds the stored
    /// form instead of the whole file and its parse trees. One request spread over lines
    /// (pretty-printed) larger than a block is walked span by span. Nil when the file is
    /// another format, or such a request smaller than a block: ``readTraces(_:blockBytes:progress:checkCancellation:)``
    /// reads those whole.
    ///
    /// - Parameter blockBytes: about how much of the file is parsed at once.
    package static func otlpLines(
        _ path: String, blockBytes: Int = 8 << 20, progress: (_ fraction: Double) -> Void = { _ in }
    ) throws -> [ReadTrace]? {
        let blocks = try LineBlocks(path: path, blockBytes: blockBytes)
        _ = try blocks.skipByteOrderMark()
        guard TraceImport.detect(Data(try blocks.peek(headBytes)), file: path) == .otlp else { return nil }
        return try otlpLines(
            blocks, path: path, blockBytes: blockBytes, readsSmallDocuments: false, progress: progress,
            checkCancellation: {})
    }

    /// The OTLP traces of `blocks`, none handed out yet.
    ///
    /// - Parameter readsSmallDocuments: whether one request spread over lines and smaller than a
    ///   block is read here (whole) rather than left to the caller (nil).
    private static func otlpLines(
        _ blocks: LineBlocks, path: String, blockBytes: Int, readsSmallDocuments: Bool,
        progress: (_ fraction: Double) -> Void, checkCancellation: () throws -> Void
    ) throws -> [ReadTrace]? {
        guard let first = try blocks.next() else { return [] }
        let spread = !JSONLines.firstLineIsWhole(first.bytes)
        // One request spread over lines: small ones are read whole, large ones walked.
        if spread && blocks.size < blockBytes {
            guard readsSmallDocuments else { return nil }
            return try OTLPImporter.traces(Data(first.bytes + blocks.remaining()), file: path).map {
                ReadTrace(trace: $0, file: path)
            }
        }
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
        var block: (bytes: [UInt8], firstLine: Int)? = spread ? (first.bytes + (try blocks.remaining()), 0) : first
        while let current = block {
            try checkCancellation()
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
