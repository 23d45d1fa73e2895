import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

/// The workspace as MCP tools: each tool reads through the Kit service its panel and its `loupe`
/// command use (``TraceService``, ``EvalService``), so an agent sees what a person sees.
///
/// Results are bounded: lists page with a cursor, a trace's steps come a window at a time with
/// a "more" hint, long texts are cut with the count of what was left out.
///
/// Thread-safety: a value; each call reads the workspace through its own statements.
package struct WorkspaceTools: Sendable {
    package let traces: TraceService
    package let evals: EvalService
    /// How the workspace is named in results: its path, or a PostgreSQL URL without password.
    package let workspaceName: String
    /// "sqlite" or "postgresql".
    package let backend: String
    /// Whether the tools that change the workspace (``labelTool``, ``traceImportTool``,
    /// ``evalRunTool``) are served.
    package let allowsWrites: Bool
    /// Records a write's command line in the workspace's history (`loupe mcp` marks it as the
    /// agent's); nil where none is kept.
    package var historyRecorder: (@Sendable (String) throws -> Void)?
    /// The workspace's tables for the retrieval, review, SAE, profile and roofline tools; nil serves the
    /// trace and eval tools only.
    package var database: (any SQLDatabase)?
    /// Where the retrieval and SAE tools find MiniLM.
    package var models: ModelLibrary?

    /// Characters of recorded text one result carries at most; past it a result says what it left out.
    package static let resultCharacterBudget = 60_000

    package init(
        traces: TraceService, evals: EvalService, workspaceName: String, backend: String, allowsWrites: Bool,
        historyRecorder: (@Sendable (String) throws -> Void)? = nil, database: (any SQLDatabase)? = nil,
        models: ModelLibrary? = nil
    ) {
        self.historyRecorder = historyRecorder
        self.database = database
        self.models = models
        self.traces = traces
        self.evals = evals
        self.workspaceName = workspaceName
        self.backend = backend
        self.allowsWrites = allowsWrites
    }

    /// The tools served, in the order `tools/list` gives them.
    package var definitions: [ToolDefinition] {
        var tools = [
            Self.workspaceInfoTool, Self.tracesListTool, Self.traceShowTool, Self.traceSearchTool,
            Self.traceDiffTool, Self.traceTokensTool, Self.sessionsListTool, Self.sessionShowTool, Self.evalsListTool,
            Self.evalShowTool, Self.evalCompareTool,
        ]
        if database != nil {
            tools += [
                Self.retrievalSearchTool, Self.retrievalEvaluateTool, Self.reviewProgressTool,
                Self.reviewCalibrationTool, Self.reviewDisagreementsTool, Self.saeFeatureTool,
                Self.saeFeaturesOfTextTool, Self.profileBreakdownTool, Self.rooflineKernelsTool,
            ]
        }
        if allowsWrites { tools += [Self.labelTool, Self.traceImportTool, Self.evalRunTool] }
        return tools
    }

    /// Runs one tool.
    ///
    /// - Throws: ``ToolCallError/unknownTool(_:)`` and ``ToolCallError/invalidArguments(_:_:)``
    ///   before anything is read; ``ToolCallError/failed(_:)`` when the tool could not do its
    ///   work (no such trace or run).
    package func call(_ name: String, arguments: JSONObject) throws(ToolCallError) -> ToolResult {
        guard let definition = definitions.first(where: { $0.name == name }) else { throw .unknownTool(name) }
        let arguments = ToolArguments(tool: name, values: arguments)
        try arguments.checkNames(against: definition)
        do {
            switch name {
            case Self.workspaceInfoTool.name: return try workspaceInfo()
            case Self.tracesListTool.name: return try tracesList(arguments)
            case Self.traceShowTool.name: return try traceShow(arguments)
            case Self.traceSearchTool.name: return try traceSearch(arguments)
            case Self.traceDiffTool.name: return try traceDiff(arguments)
            case Self.traceTokensTool.name: return try traceTokens(arguments)
            case Self.sessionsListTool.name: return try sessionsList(arguments)
            case Self.sessionShowTool.name: return try sessionShow(arguments)
            case Self.retrievalSearchTool.name: return try retrievalSearch(arguments)
            case Self.retrievalEvaluateTool.name: return try retrievalEvaluate(arguments)
            case Self.reviewProgressTool.name: return try reviewProgress(arguments)
            case Self.reviewCalibrationTool.name: return try reviewCalibration(arguments)
            case Self.reviewDisagreementsTool.name: return try reviewDisagreements(arguments)
            case Self.saeFeatureTool.name: return try saeFeature(arguments)
            case Self.saeFeaturesOfTextTool.name: return try saeFeaturesOfText(arguments)
            case Self.profileBreakdownTool.name: return try profileBreakdown(arguments)
            case Self.rooflineKernelsTool.name: return try rooflineKernels(arguments)
            case Self.evalsListTool.name: return try evalsList(arguments)
            case Self.evalShowTool.name: return try evalShow(arguments)
            case Self.evalCompareTool.name: return try evalCompare(arguments)
            case Self.labelTool.name: return try label(arguments)
            case Self.traceImportTool.name: return try traceImport(arguments)
            case Self.evalRunTool.name: return try evalRun(arguments)
            default: throw ToolCallError.unknownTool(name)
            }
        } catch let error as ToolCallError {
            throw error
        } catch {
            throw .failed(Self.describe(error))
        }
    }

    /// An error's message for an agent, control characters made visible.
    static func describe(_ error: any Error) -> String {
        UntrustedText.sanitized("\(error)")
    }

    static let workspaceInfoTool = ToolDefinition(
        name: "workspace_info", title: "Workspace",
        description: "What the Loupe workspace holds: its backend, how many traces (and with errors) and eval runs,"
            + " the latest eval run, and whether writes are allowed. Start here.",
        properties: [:])

    func workspaceInfo() throws -> ToolResult {
        let all = try traces.list()
        let runs = try evals.list()
        let erroring = all.filter { $0.errorCount > 0 }.count
        var info: JSONObject = [
            "workspace": .string(workspaceName), "backend": .string(backend),
            "traces": .number(Double(all.count)), "traces_with_errors": .number(Double(erroring)),
            "eval_runs": .number(Double(runs.count)), "writes_allowed": .bool(allowsWrites),
            "tools": .array(definitions.map { .string($0.name) }),
        ]
        var text =
            "workspace \(workspaceName) (\(backend)): \(all.count) traces (\(erroring) with errors), "
            + "\(runs.count) eval run\(runs.count == 1 ? "" : "s")"
            + (allowsWrites ? "; writes allowed" : "; read-only")
        if let latest = runs.last {
            info["latest_eval_run"] = Self.listingJSON(latest)
            text +=
                "\nlatest eval run \(latest.id): \(UntrustedFence.inline(latest.run.suite, limit: 60)), "
                + "\(latest.run.status), \(latest.answered)/\(latest.run.planned) answered"
                + (latest.headline.map { String(format: ", %@ %.3f", $0.scorer, $0.interval.estimate) } ?? "")
        }
        return ToolResult(structured: .object(info), text: text)
    }
}
