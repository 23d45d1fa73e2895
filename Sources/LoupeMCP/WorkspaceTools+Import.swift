import Foundation
import LoupeBase
import LoupeKit
import LoupeStore

extension WorkspaceTools {
    static let traceImportTool = ToolDefinition(
        name: "trace_import", title: "Import a trace file",
        description: "Imports a trace file into the workspace as `loupe trace import` does: OTLP/JSON (GenAI or"
            + " OpenInference), OpenAI message lists, Inspect logs, SWE-agent trajectories, the format found from the"
            + " file's name and content. The path is on the machine `loupe mcp` runs on, relative to its working"
            + " directory. The file is read whole before anything is written, in one transaction: a malformed file"
            + " names its line and field, and nothing is imported. Importing the same trace again changes nothing."
            + " Served only with `loupe mcp --allow-writes`; recorded in the workspace's history as coming from MCP.",
        properties: ["path": ToolDefinition.property("string", "The trace file.")],
        required: ["path"], writes: true)

    func traceImport(_ arguments: ToolArguments) throws -> ToolResult {
        let path = try arguments.string("path", required: true) ?? ""
        // `-` is standard input to `trace import`, and under stdio that is the protocol's own channel.
        guard !path.isEmpty, path != "-" else {
            throw ToolCallError.invalidArguments(
                arguments.tool, "'path' must name a file (\"\(path)\" is not one; standard input is not read here)")
        }
        let report: TraceService.ImportReport
        do {
            report = try traces.importFiles([path])
        } catch {
            // One transaction: whatever stopped it (a file missing or malformed, a busy workspace), no trace landed.
            throw ToolCallError.failed("\(arguments.tool): \(Self.describe(error)); nothing was imported")
        }
        try historyRecorder?("trace import " + Self.shellQuoted(path))
        let c = report.counts
        return ToolResult(
            structured: .object([
                "files": .number(Double(report.files)), "traces": .number(Double(report.traces)),
                "spans": .number(Double(report.spans)), "added": .number(Double(c.added)),
                "replaced": .number(Double(c.replaced)), "unchanged": .number(Double(c.unchanged)),
            ]),
            text: UntrustedFence.inline(path, limit: 80) + ": \(report.traces) traces, \(report.spans) spans — "
                + "\(c.added) added, \(c.replaced) replaced, \(c.unchanged) unchanged")
    }

    /// `word` as a shell reads it back, so a recorded line runs again as it ran.
    static func shellQuoted(_ word: String) -> String {
        let plain = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./:@,=+%".contains($0)) }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
