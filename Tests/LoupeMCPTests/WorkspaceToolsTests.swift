import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@testable import LoupeMCP

/// The tools on a workspace holding the sample Inspect log (eval run 1, one failed answer) and
/// OTLP traces, in process: what the Python client checks over the wire, plus the one write.
@Suite struct WorkspaceToolsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func workspace() throws -> Workspace {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-mcp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        _ = try TraceService(workspace: workspace).importFiles(
            ["sample-data/traces/inspect-arith.eval", "sample-data/traces/otlp-genai.jsonl"].map {
                root.appendingPathComponent($0).path
            })
        return workspace
    }

    static func tools(_ workspace: Workspace, writes: Bool, history: (@Sendable (String) throws -> Void)? = nil)
        -> WorkspaceTools
    {
        WorkspaceTools(
            traces: TraceService(workspace: workspace), evals: EvalService(workspace: workspace),
            workspaceName: "w.sqlite", backend: "sqlite", allowsWrites: writes, historyRecorder: history)
    }

    @Test func theFailedAnswersOfARunLeadToTheirTraces() throws {
        let workspace = try Self.workspace()
        let tools = Self.tools(workspace, writes: false)
        let shown = try tools.call("eval_show", arguments: ["id": .number(1)]).structured
        let answers = try #require(shown["answers"]?.array)
        let failed = try EvalService(workspace: workspace).detail(1).rows.filter(\.failed)
        #expect(answers.count == failed.count && !answers.isEmpty)
        #expect(answers.map { $0["item_id"]?.string } == failed.map { $0.result.itemID })
        let trace = try #require(answers.first?["trace"]?.int)
        let steps = try tools.call("trace_show", arguments: ["id": .number(Double(trace))])
        let loaded = try TraceService(workspace: workspace).load(trace)
        #expect(steps.structured["steps"]?.array?.count == loaded.steps.count)
        #expect(steps.structured["steps"]?.array?.contains { $0["status"] == .string("error") } == true)
        #expect(steps.text.contains("<untrusted-data>"))
    }

    @Test func aLongTraceComesAWindowAtATimeWithAHintToGoOn() throws {
        let tools = Self.tools(try Self.workspace(), writes: false)
        let first = try tools.call("trace_show", arguments: ["id": .number(1), "max_steps": .number(1)]).structured
        let count = try #require(first["step_count"]?.int)
        try #require(count > 1)
        #expect(first["steps"]?.array?.count == 1)
        #expect(first["more"]?["from_step"] == .number(1))
        let rest = try tools.call("trace_show", arguments: ["id": .number(1), "from_step": .number(1)]).structured
        #expect(rest["steps"]?.array?.count == Int(count) - 1)
        #expect(rest["more"] == nil)
    }

    @Test func writesNeedAllowingAndAreRecordedAsComingFromMCP() throws {
        let workspace = try Self.workspace()
        #expect(throws: ToolCallError.unknownTool("eval_label")) {
            try Self.tools(workspace, writes: false).call(
                "eval_label", arguments: ["id": .number(1), "label": .string("baseline")])
        }
        let settings = SettingsTables(workspace)
        let tools = Self.tools(workspace, writes: true) { try settings.recordHistory($0, source: .mcp) }
        #expect(tools.definitions.contains { $0.name == "eval_label" && $0.writes })
        #expect(tools.definitions.contains { $0.name == "eval_run" && $0.writes })
        #expect(!Self.tools(workspace, writes: false).definitions.contains { $0.name == "eval_run" })
        let result = try tools.call("eval_label", arguments: ["id": .number(1), "label": .string("baseline")])
        #expect(result.structured["label"] == .string("baseline"))
        #expect(try EvalService(workspace: workspace).label(run: 1) == "baseline")
        #expect(try settings.entries().map { "\($0.source) \($0.line)" } == ["mcp eval label 1 baseline"])
    }
}
