import LoupeKit
import LoupeStore

extension TracesPanel {
    /// Every trace with its totals: after the first, only the traces changed since are read,
    /// unless `fresh` (the reload key) asks for all of them again.
    package struct ListTraces: PortRequest {
        package var fresh: Bool

        package init(fresh: Bool = false) {
            self.fresh = fresh
        }

        package func ask(_ port: TracesBrowser) throws -> [TraceSummary] { try port.list(fresh: fresh) }
    }

    /// The first traces in import order and how many there are: the first view of a large
    /// workspace, shown while ``ListTraces`` reads them all.
    package struct ListFirstTraces: PortRequest {
        package var limit: Int

        package init(limit: Int = TracesBrowser.firstPage) {
            self.limit = limit
        }

        package func ask(_ port: TracesBrowser) throws -> TraceService.Page { try port.list(first: limit) }
    }

    /// One trace's spans and steps (no payloads).
    package struct OpenTrace: PortRequest {
        package var id: Int64

        package init(id: Int64) {
            self.id = id
        }

        package func ask(_ port: TracesBrowser) throws -> TraceService.Loaded { try port.open(id) }
    }

    /// One span's content, for the step under the cursor.
    package struct LoadSpan: PortRequest {
        package var trace: Int64
        package var ordinal: Int
        /// Which load of the trace asked: an answer asked before the trace was read again (a
        /// live trace that grew) holds the old content and is dropped.
        package var generation: Int

        package init(trace: Int64, ordinal: Int, generation: Int = 0) {
            self.trace = trace
            self.ordinal = ordinal
            self.generation = generation
        }

        package func ask(_ port: TracesBrowser) throws -> SpanDetail { try port.span(trace: trace, ordinal: ordinal) }
    }

    /// The spans of a trace whose content contains a text (`/` confirmed).
    package struct SearchTrace: PortRequest {
        package var trace: Int64
        package var text: String

        package init(trace: Int64, text: String) {
            self.trace = trace
            self.text = text
        }

        package func ask(_ port: TracesBrowser) throws -> [Int] { try port.search(trace: trace, text: text) }
    }

    /// Two traces aligned step by step.
    package struct DiffTraces: PortRequest {
        package var left: Int64
        package var right: Int64

        package init(left: Int64, right: Int64) {
            self.left = left
            self.right = right
        }

        package func ask(_ port: TracesBrowser) throws -> TraceDiff { try port.diff(left, right) }
    }

    /// The MiniLM forward passes a span ran, it or the spans under it (`p`).
    package struct ForwardPasses: PortRequest {
        package var trace: Int64
        package var ordinal: Int

        package init(trace: Int64, ordinal: Int) {
            self.trace = trace
            self.ordinal = ordinal
        }

        package func ask(_ port: TracesBrowser) throws -> [RooflineFocus] {
            try port.forwardPasses(trace: trace, at: ordinal)
        }
    }
}
