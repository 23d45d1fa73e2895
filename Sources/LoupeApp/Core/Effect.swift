import LoupeKit

/// Work the runtime does for ``AppState/update(_:)``, which stays pure.
package enum Effect: Hashable, Sendable {
    case quit
    case suspend
    case redraw
    /// Run a command line as a job; results come back as ``Msg/jobFinished(_:_:)``.
    case runCommand(JobID, String)
    /// Ask running jobs to stop.
    case cancelJobs
    /// Remember a `:` line in the workspace's history.
    case recordHistory(String)
    /// Find notebooks to list in the Notebooks panel.
    case listNotebooks
    /// Read and parse a notebook for the Notebooks panel.
    case openNotebook(path: String)
    /// Run MiniLM on a sentence (or a pair) for the Attention panel.
    case analyzeAttention(AttentionRequest)
    /// Read the latest machine profile and measured kernels for the Roofline panel.
    case loadRoofline
    /// Run a query for the Retrieval panel.
    case searchRetrieval(RetrievalRequest)
    /// Read a whole document for the Retrieval panel.
    case loadDocument(String)
    /// Read the trace list for the Traces panel.
    case loadTraces
    /// Read one trace's spans (no payloads) for the Traces panel.
    case openTrace(Int64)
    /// Read one span's content for the step the Traces panel shows.
    case loadSpan(trace: Int64, ordinal: Int)
    /// Find the spans of a trace whose content contains a text (the Traces panel's `/`).
    case searchTrace(Int64, String)
    /// Compare two traces step by step (the Traces panel's diff view).
    case diffTraces(Int64, Int64)
    /// Write an export (CSV, JSON) to a file.
    case writeFile(path: String, contents: String)
    /// Read the eval runs (and the suites that can be run) for the Evals panel.
    case loadEvals
    /// Read one eval run's answers and scores.
    case loadEvalRun(Int64)
    /// Compare an eval run with a baseline.
    case compareEvalRuns(baseline: Int64, run: Int64)
    /// Read the workspace's SAEs (settings, metrics, training curves) for the SAE panel.
    case loadSAE
    /// Encode an SAE's activation set (once) and list its features.
    case loadSAEFeatures(Int64)
    /// Build one feature's card.
    case loadSAEFeature(model: Int64, feature: Int)
    /// Run MiniLM and an SAE on a text (the SAE panel's test text).
    case activateSAE(model: Int64, text: String)
    /// Store a feature's label (empty removes it).
    case labelSAEFeature(model: Int64, feature: Int, label: String)
}
