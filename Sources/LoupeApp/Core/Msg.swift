import LoupeAgents
import LoupeKit
import LoupeStore
import LoupeTUI

/// Everything that can change the app: input, time, job reports and loaded data.
package enum Msg: Hashable, Sendable {
    case input(InputEvent)
    /// Monotonic seconds; sent while jobs run so progress and ETAs move.
    case tick(Double)
    case jobProgress(JobID, JobProgress)
    case jobFinished(JobID, CommandOutcome)
    /// SIGTERM, SIGINT or SIGHUP arrived: leave cleanly.
    case terminate(Int32)
    case notebooksListed([NotebookSummary])
    case notebookOpened(path: String, result: NotebookLoad)
    case attentionAnalyzed(AttentionRequest, AttentionLoad)
    case fileWritten(path: String, error: String?)
    case rooflineLoaded(RooflineModel)
    case retrievalSearched(RetrievalRequest, RetrievalLoad)
    case retrievalDocument(String, RetrievalDocument?)
    case tracesLoaded([TraceSummary])
    case traceOpened(Int64, TraceOpen)
    case spanLoaded(trace: Int64, ordinal: Int, SpanDetail?)
    case traceSearched(trace: Int64, query: String, ordinals: [Int])
    case tracesDiffed(left: Int64, right: Int64, TraceDiffLoad)
    case evalsLoaded(EvalsOverview)
    case evalRunLoaded(Int64, EvalRunLoad)
    case evalsCompared(baseline: Int64, run: Int64, EvalCompareLoad)
    /// Another panel asked this one to show something (an eval answer's trace or ranking).
    case navigate(Navigation)
    case saeListed(Load<[SAEListing]>)
    case saeFeaturesLoaded(Int64, Load<[SAEFeatureIndex.Summary]>)
    case saeFeatureLoaded(model: Int64, feature: Int, Load<SAEFeatureIndex.Card>)
    case saeActivated(model: Int64, text: String, Load<SAETextActivations>)
}

/// Something a panel asked for, or why it could not be had.
package enum Load<Value: Hashable & Sendable>: Hashable, Sendable {
    case loaded(Value)
    case failed(String)

    /// `body`'s value, or its error as text.
    package static func from(_ body: () throws -> Value) -> Load {
        do { return .loaded(try body()) } catch { return .failed("\(error)") }
    }
}

/// Where a jump from one panel to another goes.
package enum Navigation: Hashable, Sendable {
    case trace(Int64)
    case retrieval(RetrievalRequest)

    package var panel: PanelID {
        switch self {
        case .trace: .traces
        case .retrieval: .retrieval
        }
    }
}

/// The eval runs and the suite files found beside the workspace and in sample-data/evals.
package struct EvalsOverview: Hashable, Sendable {
    package var runs: [EvalService.RunListing]
    package var suites: [String]
    package var error: String?

    package init(runs: [EvalService.RunListing], suites: [String], error: String? = nil) {
        self.runs = runs
        self.suites = suites
        self.error = error
    }
}

package enum EvalRunLoad: Hashable, Sendable {
    case loaded(EvalService.RunDetail)
    case failed(String)
}

package enum EvalCompareLoad: Hashable, Sendable {
    case loaded(EvalService.Comparison)
    case failed(String)
}

package enum TraceDiffLoad: Hashable, Sendable {
    case loaded(TraceDiff)
    case failed(String)
}

package enum TraceOpen: Hashable, Sendable {
    case loaded(TraceService.Loaded)
    case failed(String)
}

/// A span's content and its source as written, for the step pane.
package struct SpanDetail: Hashable, Sendable {
    package var payload: SpanPayload
    package var raw: JSONValue?

    package init(payload: SpanPayload, raw: JSONValue?) {
        self.payload = payload
        self.raw = raw
    }
}

/// A query for the Retrieval panel, with the retriever and its knobs.
package struct RetrievalRequest: Hashable, Sendable {
    package var query: String
    package var options: RetrievalService.Options

    package init(_ query: String, options: RetrievalService.Options) {
        self.query = query
        self.options = options
    }
}

/// The hits of a query, with each retriever's own top k for the side-by-side view.
package struct RetrievalResult: Hashable, Sendable {
    package var hits: [RetrievalService.Hit]
    package var bm25Top: [RetrievalService.Hit]
    package var denseTop: [RetrievalService.Hit]
    /// The query's judgments and metrics when it is a judged query.
    package var judged: JudgedQuery?
    /// The retrieval record this run was saved as.
    package var record: Int64?

    package init(
        hits: [RetrievalService.Hit], bm25Top: [RetrievalService.Hit], denseTop: [RetrievalService.Hit],
        judged: JudgedQuery? = nil, record: Int64? = nil
    ) {
        self.hits = hits
        self.bm25Top = bm25Top
        self.denseTop = denseTop
        self.judged = judged
        self.record = record
    }
}

package enum RetrievalLoad: Hashable, Sendable {
    case found(RetrievalResult)
    case failed(String)
}

/// A whole document, for the Retrieval panel's document view.
package struct RetrievalDocument: Hashable, Sendable {
    package var title: String
    package var body: String

    package init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// What the Attention panel asks MiniLM to read: a sentence, or a pair.
package struct AttentionRequest: Hashable, Sendable {
    package var first: String
    package var second: String?

    package init(_ first: String, second: String? = nil) {
        self.first = first
        self.second = second
    }
}

/// An attention analysis, or why it could not be made.
package enum AttentionLoad: Hashable, Sendable {
    case analyzed(AttentionAnalysis)
    case failed(String)
}

/// A notebook found on disk.
package struct NotebookSummary: Hashable, Sendable {
    package var path: String
    package var title: String
    package var cellCount: Int

    package init(path: String, title: String, cellCount: Int) {
        self.path = path
        self.title = title
        self.cellCount = cellCount
    }
}

/// A notebook read from disk, or why it could not be.
package enum NotebookLoad: Hashable, Sendable {
    case loaded(Notebook)
    case failed(String)
}
