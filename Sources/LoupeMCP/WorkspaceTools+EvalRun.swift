import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit

extension WorkspaceTools {
    static let evalRunTool = ToolDefinition(
        name: "eval_run", title: "Run an eval suite",
        description: "Runs an eval suite file (YAML) as `loupe eval run SUITE` does, through the same service: every"
            + " item through its target, scored by its scorers, each answer stored as it finishes; an unfinished run"
            + " of the same suite resumes unless `new` is true. Only suites that need no network run here: targets and"
            + " judges on the `offline` or `local` provider, and retrieval targets; a suite naming another provider is"
            + " refused before anything is written. The path is on the machine `loupe mcp` runs on, relative to its"
            + " working directory. A SQLite workspace only (a PostgreSQL one is answered by `loupe eval worker`)."
            + " Returns the run's id and its scorers' means with their 95% intervals, as eval_show reports them."
            + " Served only with `loupe mcp --allow-writes`; recorded in the workspace's history as coming from MCP.",
        properties: [
            "path": ToolDefinition.property("string", "The suite file (YAML)."),
            "epochs": ToolDefinition.property(
                "integer", "Trials per item (default: the suite's epochs, else 1).",
                ["minimum": .number(1), "maximum": .number(100)]),
            "limit": ToolDefinition.property(
                "integer", "Only the first N items.", ["minimum": .number(1), "maximum": .number(1_000_000)]),
            "only_failed": ToolDefinition.property(
                "integer", "Re-run the failed items of this run (evals_list) and carry the others over."),
            "new": ToolDefinition.property("boolean", "Start a new run instead of resuming an unfinished one."),
        ],
        required: ["path"], writes: true)

    /// The providers a run on the agent's behalf may call: in-process, no network.
    static let evalRunProviders: Set<String> = ["offline", "local"]

    func evalRun(_ arguments: ToolArguments) throws -> ToolResult {
        let path = try arguments.string("path", required: true) ?? ""
        guard !path.isEmpty, path != "-" else {
            throw ToolCallError.invalidArguments(
                arguments.tool, "'path' must name a suite file (\"\(path)\" is not one)")
        }
        var options = EvalService.RunOptions()
        func given(_ name: String) -> Bool { arguments.values[name].map { !$0.isNull } ?? false }
        if given("epochs") { options.epochs = Int(try arguments.integer("epochs", in: 1...100)) }
        if given("limit") { options.limit = Int(try arguments.integer("limit", in: 1...1_000_000)) }
        if given("only_failed") { options.onlyFailed = try arguments.integer("only_failed") }
        options.fresh = try arguments.bool("new", default: false)
        func failed(_ what: String) -> ToolCallError {
            .failed("\(arguments.tool) \(UntrustedFence.inline(path, limit: 200)): \(what); no run was made")
        }
        let loaded: EvalService.LoadedSuite
        do { loaded = try evals.load(path) } catch { throw failed(Self.describe(error)) }
        let network = Self.networkProviders(loaded.suite)
        if !network.isEmpty {
            throw failed(
                "it calls the provider \(network.sorted().joined(separator: ", ")) (\(loaded.suite.target.kind) "
                    + "target or judge); over MCP only offline and local run")
        }
        // A PostgreSQL workspace's runs are answered by workers: say so before a run row is planned.
        do { _ = try evals.workspace } catch { throw failed(Self.describe(error)) }
        if let parent = options.onlyFailed {
            do { _ = try evals.detail(parent) } catch { throw failed("only_failed: \(Self.describe(error))") }
        }
        let outcome: EvalService.RunOutcome
        do { outcome = try evals.run(loaded, options: options) } catch {
            throw ToolCallError.failed(
                "\(arguments.tool) \(UntrustedFence.inline(path, limit: 200)): \(Self.describe(error)); "
                    + "the answers made are kept (run it again to resume)")
        }
        var line = "eval run " + Self.shellQuoted(path)
        if let epochs = options.epochs { line += " --epochs \(epochs)" }
        if let limit = options.limit { line += " --limit \(limit)" }
        if let parent = options.onlyFailed { line += " --only-failed \(parent)" }
        if options.fresh { line += " --new" }
        try historyRecorder?(line)
        return Self.evalRunResult(outcome, suite: loaded.suite)
    }

    /// The providers `suite` would call that are neither `offline` nor `local`: its target's and its judges'.
    static func networkProviders(_ suite: EvalSuite) -> Set<String> {
        var kinds: [String] = []
        switch suite.target {
        case .retrieval: break
        case .agent(let target): kinds.append(target.provider.kind)
        case .model(let target): kinds.append(target.provider.kind)
        }
        for scorer in suite.scorers {
            if case .judge(let provider, _) = scorer.kind { kinds.append(provider.kind) }
        }
        return Set(kinds).subtracting(evalRunProviders)
    }

    /// The new run as an agent reads it: its id, status and the scorers' intervals (as eval_show gives them).
    static func evalRunResult(_ outcome: EvalService.RunOutcome, suite: EvalSuite) -> ToolResult {
        let summary = outcome.summary
        let scorers = summary.scorers.prefix(50)
        var lines = [
            "run \(outcome.runID) \(outcome.status) · \(UntrustedFence.inline(suite.name, limit: 60)) · "
                + "\(outcome.answered) answers made"
                + (outcome.resumed || outcome.skipped > 0 ? ", \(outcome.skipped) already there or carried over" : "")
                + " · \(summary.items) items, \(summary.rows) answers, \(summary.errors) errors"
        ]
        lines += scorers.map {
            String(
                format: "  %@ %@ %.3f [%.3f, %.3f] over %d items", UntrustedFence.inline($0.scorer, limit: 40),
                $0.statistic, $0.interval.estimate, $0.interval.lower, $0.interval.upper, $0.items)
        }
        if !outcome.unjudged.isEmpty { lines.append("left out \(outcome.unjudged.count) items with no judgments") }
        return ToolResult(
            structured: .object([
                "id": .number(Double(outcome.runID)), "status": .string(outcome.status),
                "resumed": .bool(outcome.resumed), "answered": .number(Double(outcome.answered)),
                "skipped": .number(Double(outcome.skipped)), "items": .number(Double(summary.items)),
                "answers_total": .number(Double(summary.rows)), "errors": .number(Double(summary.errors)),
                "unjudged": .number(Double(outcome.unjudged.count)),
                "scorers": .array(scorers.map(scorerJSON)),
            ]),
            text: lines.joined(separator: "\n"))
    }
}
