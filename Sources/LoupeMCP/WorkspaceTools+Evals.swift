import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

extension WorkspaceTools {
    static let evalsListTool = ToolDefinition(
        name: "evals_list", title: "List eval runs",
        description: "Every eval run (Inspect logs in the workspace included), oldest first: suite, label, target,"
            + " status, answers, and the headline scorer with its 95% interval." + untrustedNoteForNames,
        properties: [:])

    static let evalShowTool = ToolDefinition(
        name: "eval_show", title: "Show an eval run",
        description: "One eval run: provenance, every scorer's statistics (mean or pass rate with 95% intervals,"
            + " errors), and its answers with their scores, the failed ones only by default, a page at a time."
            + " An answer's trace (trace_show) shows how the agent got there." + ToolDefinition.untrustedNote,
        properties: [
            "id": ToolDefinition.property("integer", "The run's id (evals_list)."),
            "failed_only": ToolDefinition.property("boolean", "Only failed or errored answers (default true)."),
            "limit": ToolDefinition.property(
                "integer", "Answers per page (1-100, default 20).", ["minimum": .number(1), "maximum": .number(100)]),
            "cursor": ToolDefinition.property("string", "next_cursor from the previous page."),
            "max_chars": ToolDefinition.property(
                "integer", "Characters of one input or output at most (100-20000, default 1000).",
                ["minimum": .number(100), "maximum": .number(20000)]),
        ],
        required: ["id"])

    static let evalCompareTool = ToolDefinition(
        name: "eval_compare", title: "Compare two eval runs",
        description: "Run b against baseline run a on the items both answered, as `loupe eval compare`: per scorer"
            + " the paired difference with its interval and p-value (for pass/fail scorers with one epoch"
            + " Tango's score interval and McNemar's test without continuity correction, which agree; else a t"
            + " interval and a paired t-test), Benjamini-Hochberg adjusted p-value, wins/ties/losses and the"
            + " minimum detectable effect; then the items fixed and regressed." + ToolDefinition.untrustedNote,
        properties: [
            "a": ToolDefinition.property("integer", "The baseline run."),
            "b": ToolDefinition.property("integer", "The run compared with it."),
            "scorer": ToolDefinition.property(
                "string", "List the items this scorer fixed and regressed (default: the headline)."),
            "items": ToolDefinition.property(
                "integer", "Fixed and regressed items listed at most (0-100, default 10).",
                ["minimum": .number(0), "maximum": .number(100)]),
        ],
        required: ["a", "b"])

    static let labelTool = ToolDefinition(
        name: "eval_label", title: "Label an eval run",
        description: "Names a run (\"baseline\", \"prompt v2\"); an empty label removes it. Writes: served only"
            + " with `loupe mcp --allow-writes`; it is recorded in the workspace's history as coming from MCP.",
        properties: [
            "id": ToolDefinition.property("integer", "The run's id (evals_list)."),
            "label": ToolDefinition.property("string", "The label; empty to remove it."),
        ],
        required: ["id", "label"], writes: true)

    /// A run's row as an agent reads it: provenance, answers, label and headline.
    static func listingJSON(_ listing: EvalService.RunListing) -> JSONValue {
        guard case .object(var run) = EvalService.runJSON(listing.run) else { return .null }
        run["answered"] = .number(Double(listing.answered))
        run["label"] = listing.label.map(JSONValue.string) ?? .null
        run["headline"] = listing.headline.map(scorerJSON) ?? .null
        return .object(run)
    }

    static func scorerJSON(_ s: ScorerSummary) -> JSONValue {
        .object([
            "scorer": .string(s.scorer), "statistic": .string(s.statistic), "estimate": .number(s.interval.estimate),
            "lower": .number(s.interval.lower), "upper": .number(s.interval.upper),
            "interval": .string(s.interval.method), "items": .number(Double(s.items)),
        ])
    }

    func evalsList(_ arguments: ToolArguments) throws -> ToolResult {
        let runs = try evals.list()
        let lines = runs.map { listing in
            let title = (listing.label.map { $0 + " · " } ?? "") + listing.run.suite
            return "  \(listing.id)  \(UntrustedFence.inline(title, limit: 50))"
                + "  \(listing.run.status)  \(listing.answered)/\(listing.run.planned)"
                + (listing.headline.map {
                    String(
                        format: "  %@ %.3f [%.3f, %.3f]", $0.scorer, $0.interval.estimate, $0.interval.lower,
                        $0.interval.upper)
                } ?? "")
        }
        return ToolResult(
            structured: .object(["runs": .array(runs.map(Self.listingJSON))]),
            text: (["\(runs.count) eval run\(runs.count == 1 ? "" : "s")"] + lines).joined(separator: "\n"))
    }

    func evalShow(_ arguments: ToolArguments) throws -> ToolResult {
        let id = try arguments.integer("id")
        let failedOnly = try arguments.bool("failed_only", default: true)
        let limit = Int(try arguments.integer("limit", default: 20, in: 1...100))
        let maxChars = Int(try arguments.integer("max_chars", default: 1000, in: 100...20000))
        let offset = try arguments.cursor()
        let detail: EvalService.RunDetail
        do { detail = try evals.detail(id) } catch let error as EvalError {
            throw ToolCallError.failed(error.description)
        }
        let shown = detail.rows.filter { !failedOnly || $0.failed }
        let page = shown.dropFirst(offset).prefix(limit)
        let next = offset + page.count < shown.count ? ToolArguments.cursor(at: offset + page.count) : nil
        func cut(_ text: String) -> JSONValue { UntrustedFence.truncatedValue(text, limit: maxChars) }
        let answers: [JSONValue] = page.map { row in
            .object([
                "item_id": .string(row.result.itemID), "epoch": .number(Double(row.result.epoch)),
                "failed": .bool(row.failed), "input": cut(row.result.input),
                "targets": .array(row.targets.map(JSONValue.string)),
                "output": row.result.output.map(cut) ?? .null, "error": row.result.error.map(cut) ?? .null,
                "trace": row.result.traceID.map { .number(Double($0)) } ?? .null,
                "latency_ms": row.result.latencyMs.map(JSONValue.number) ?? .null,
                "scores": .object(
                    JSONObject(
                        row.scores.map { score in
                            (
                                score.scorer,
                                JSONValue.object([
                                    "value": .number(score.value), "passed": score.passed.map(JSONValue.bool) ?? .null,
                                    "explanation": cut(score.explanation),
                                ])
                            )
                        })),
            ])
        }
        let listing = detail.listing
        let summary = listing.summary
        var result: JSONObject = [
            "run": Self.listingJSON(listing), "scorers": .array(summary.scorers.map(Self.scorerJSON)),
            "items": .number(Double(summary.items)), "answers_total": .number(Double(summary.rows)),
            "errors": .number(Double(summary.errors)),
            "failed": .number(Double(detail.rows.filter(\.failed).count)),
            "answers": .array(answers), "next_cursor": next.map(JSONValue.string) ?? .null,
        ]
        if let next {
            result["more"] = .string("\(shown.count - offset - page.count) more answers: cursor \"\(next)\"")
        }
        var lines = [
            "run \(id) · \(UntrustedFence.inline(listing.run.suite, limit: 60)) · \(listing.run.status) · "
                + "\(summary.rows) answers, \(summary.errors) errors, \(detail.rows.filter(\.failed).count) failed"
        ]
        lines += summary.scorers.map {
            String(
                format: "  %@ %@ %.3f [%.3f, %.3f] over %d items", $0.scorer, $0.statistic, $0.interval.estimate,
                $0.interval.lower, $0.interval.upper, $0.items)
        }
        lines.append(
            (failedOnly ? "failed answers " : "answers ") + "\(offset + 1)-\(offset + page.count) of \(shown.count):")
        let rendered = page.map { row -> String in
            let trace = row.result.traceID.map { " (trace \($0))" } ?? ""
            let answer =
                row.result.error.map { "error: " + $0.prefix(200) } ?? String((row.result.output ?? "").prefix(200))
            let scores = row.scores.map { "\($0.scorer)=" + String(format: "%.3f", $0.value) }
            return "\(row.result.itemID)/\(row.result.epoch)\(trace): \(answer)  scores: "
                + scores.joined(separator: " ")
        }
        var text = lines.joined(separator: "\n")
        if !rendered.isEmpty { text += "\n" + UntrustedFence.fenced(rendered.joined(separator: "\n")) }
        if let next { text += "\nmore: call again with cursor \"\(next)\"" }
        return ToolResult(structured: .object(result), text: text)
    }

    func evalCompare(_ arguments: ToolArguments) throws -> ToolResult {
        let a = try arguments.integer("a")
        let b = try arguments.integer("b")
        let scorer = try arguments.string("scorer")
        let items = Int(try arguments.integer("items", default: 10, in: 0...100))
        let comparison: EvalService.Comparison
        do { comparison = try evals.compare(a, b) } catch let error as EvalError {
            throw ToolCallError.failed(error.description)
        }
        if let scorer, comparison.deltasByScorer[scorer] == nil {
            throw ToolCallError.invalidArguments(
                arguments.tool,
                "'scorer' \(UntrustedFence.inline(scorer, limit: 40)): runs \(a) and \(b) share "
                    + comparison.metrics.metrics.map(\.scorer).joined(separator: ", "))
        }
        let encoder = EvalService.encoder
        let metrics = try comparison.metrics.metrics.map { metric -> JSONValue in
            .object([
                "scorer": .string(metric.scorer), "paired": try JSONValue.parse(encoder.encode(metric.paired)),
                "p_bh": .number(metric.adjustedPValue), "significant": .bool(metric.significant),
            ])
        }
        let deltas = comparison.itemDeltas(scorer)
        let fixed = Array(deltas.filter { $0.delta > 0 }.reversed())
        let regressed = deltas.filter { $0.delta < 0 }
        func itemsJSON(_ list: [EvalService.ItemDelta]) -> JSONValue {
            .array(
                list.prefix(items).map {
                    .object([
                        "item_id": .string($0.itemID), "a": .number($0.a), "b": .number($0.b),
                        "input": .string(String($0.input.prefix(500))),
                    ])
                })
        }
        var lines = comparison.warnings.map { "warning: \($0)" }
        lines.append("run \(b) vs baseline run \(a):")
        for metric in comparison.metrics.metrics {
            let p = metric.paired
            lines.append(
                String(
                    format: "  %@: A %.3f  B %.3f  B−A %+.3f [%+.3f, %+.3f]  p %.4f  p(BH) %.4f%@  W/T/L %d/%d/%d",
                    metric.scorer, p.meanA, p.meanB, p.difference.estimate, p.difference.lower, p.difference.upper,
                    p.pValue, metric.adjustedPValue, metric.significant ? " *" : "", p.wins, p.ties, p.losses))
        }
        lines.append("\(scorer ?? comparison.headline): \(fixed.count) fixed, \(regressed.count) regressed")
        let rendered = (fixed.prefix(items).map { ("fixed", $0) } + regressed.prefix(items).map { ("regressed", $0) })
            .map {
                "\($0.0) \($0.1.itemID): \(String(format: "%.3f → %.3f", $0.1.a, $0.1.b))  \($0.1.input.prefix(120))"
            }
        var text = lines.joined(separator: "\n")
        if !rendered.isEmpty { text += "\n" + UntrustedFence.fenced(rendered.joined(separator: "\n")) }
        return ToolResult(
            structured: .object([
                "a": .number(Double(a)), "b": .number(Double(b)),
                "warnings": .array(comparison.warnings.map(JSONValue.string)), "metrics": .array(metrics),
                "scorer": .string(scorer ?? comparison.headline),
                "fixed_count": .number(Double(fixed.count)), "regressed_count": .number(Double(regressed.count)),
                "fixed": itemsJSON(fixed), "regressed": itemsJSON(regressed),
            ]),
            text: text)
    }

    func label(_ arguments: ToolArguments) throws -> ToolResult {
        let id = try arguments.integer("id")
        let text = try arguments.string("label", required: true) ?? ""
        do { try evals.setLabel(text, run: id) } catch let error as EvalError {
            throw ToolCallError.failed(error.description)
        }
        let label = try evals.label(run: id)
        try historyRecorder?("eval label \(id) " + Self.shellQuoted(text))
        return ToolResult(
            structured: .object(["id": .number(Double(id)), "label": label.map(JSONValue.string) ?? .null]),
            text: label.map { "run \(id) is labelled “\(UntrustedFence.inline($0, limit: 80))”" }
                ?? "run \(id) has no label")
    }
}
