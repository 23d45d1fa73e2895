import LoupeBase
import LoupeStore

/// The Traces panel's port: what it reads of the workspace. Reads only; imports and forks go
/// through ``TraceService`` and the commands.
///
/// Thread-safety: any thread (the workspace's pool serialises its own access).
package struct TracesBrowser: Sendable {
    private let service: TraceService
    /// The list as last read, so that reading it again reads only the traces changed since.
    private let kept = TraceService.KeptList()

    package init(workspace: Workspace) { service = TraceService(workspace: workspace) }

    package init(tables: TraceTables) { service = TraceService(tables: tables) }

    /// Every trace, oldest import first, with its totals: after the first read, only the traces
    /// changed since are read, unless `fresh` asks for all of them again (the reload key: a
    /// file put back from a backup numbers its traces from an older count).
    package func list(fresh: Bool = false) throws -> [TraceSummary] {
        if fresh { kept.forget() }
        return try service.list(keeping: kept)
    }

    /// The traces the panel's first view reads before the whole list: a screenful many times
    /// over, read in milliseconds from however large a workspace.
    package static let firstPage = 500

    /// The first `limit` traces and how many there are: the panel's first view on a large
    /// workspace, before the whole list is read.
    package func list(first limit: Int) throws -> TraceService.Page { try service.list(first: limit) }

    /// One trace's spans (no payloads) and its steps.
    package func open(_ id: Int64) throws -> TraceService.Loaded { try service.load(id) }

    /// One span's content and its source as written, for the step pane: decoded here, once,
    /// with the columns that do not read back named in ``SpanDetail/unreadable``.
    package func span(trace: Int64, ordinal: Int) throws -> SpanDetail {
        try service.detail(trace: trace, ordinal: ordinal)
    }

    /// The ordinals of the spans of `trace` whose content contains `text`.
    package func search(trace: Int64, text: String) throws -> [Int] {
        try service.tables.searchSpans(trace: trace, text: text)
    }

    /// The MiniLM forward passes recorded at span `ordinal` or under it, naming their kernel runs.
    package func forwardPasses(trace: Int64, at ordinal: Int) throws -> [RooflineFocus] {
        try service.forwardPasses(trace: trace, at: ordinal)
    }

    /// Two traces compared step by step.
    package func diff(_ left: Int64, _ right: Int64) throws -> TraceDiff { try service.diff(left, right) }
}
