import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@testable import LoupeMCP

/// `roofline_kernels` on a SQLite workspace holding a measured CPU profile (200 GFLOP/s FP32,
/// 20 GB/s DRAM) and three kernel runs: the figures are the Roofline panel's, and the roofline
/// formula checks them.
@Suite struct RooflineKernelsToolTests {
    static func workspace() throws -> Workspace {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-mcp-roofline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        _ = try workspace.roofline.record(
            MachineProfileRecord(machine: "this cpu", cores: 2, sweepJSON: "[]"),
            ceilings: [
                CeilingRecord(kind: "compute", name: "FP32", value: 200, provenance: "measured"),
                CeilingRecord(kind: "memory", name: "DRAM", value: 20, provenance: "measured"),
            ])
        try workspace.roofline.record([
            // 2·256³·10 FLOPs in 10 ms over 2 threads (5 ms each): 67.1 GFLOP/s at 42.7 FLOP/byte.
            KernelRun(
                suite: "kernels", kernel: "sgemm", workload: "256x256x256, 2 threads", calls: 10,
                nanoseconds: 10_000_000, flops: 2 * 256 * 256 * 256 * 10, bytes: 3 * 256 * 256 * 4 * 10, threads: 2,
                machine: "this cpu"),
            // 2·2²⁰·10 FLOPs over 12 bytes an element: 1/6 FLOP/byte, under the DRAM roof.
            KernelRun(
                suite: "kernels", kernel: "saxpy", workload: "1048576, 1 thread", calls: 10,
                nanoseconds: 40_000_000, flops: 2 * 1_048_576 * 10, bytes: 12 * 1_048_576 * 10, threads: 1,
                machine: "this cpu"),
            KernelRun(
                suite: "kernels", kernel: "copy", workload: "1048576, 1 thread", calls: 10,
                nanoseconds: 4_000_000, flops: 0, bytes: 8 * 1_048_576 * 10, threads: 1, machine: "this cpu"),
        ])
        return workspace
    }

    static func tools(_ workspace: Workspace) -> WorkspaceTools {
        WorkspaceTools(
            traces: TraceService(workspace: workspace), evals: EvalService(workspace: workspace),
            workspaceName: "w.sqlite", backend: "sqlite", allowsWrites: false, database: workspace)
    }

    @Test func eachKernelsShareOfItsRoofIsTheRooflineModels() throws {
        let workspace = try Self.workspace()
        let result = try Self.tools(workspace).call("roofline_kernels", arguments: [:])
        let structured = result.structured
        #expect(structured["profile"] == .string("this cpu") && structured["precision"] == .string("FP32"))
        #expect(structured["kernel_count"] == .number(3) && structured["next_cursor"] == .null)
        let kernels = try #require(structured["kernels"]?.array)
        let profile = try #require(try RooflineBrowser(workspace: workspace).model().profiles.first)
        let placements = profile.placements("FP32")
        #expect(kernels.map { $0["name"]?.string } == placements.map(\.point.name))
        for (kernel, placement) in zip(kernels, placements) {
            #expect(kernel["percent_of_attainable"] == placement.fraction.map { .number($0 * 100) } ?? .null)
            #expect(kernel["gflops_per_second"] == placement.gflopsPerSecond.map(JSONValue.number) ?? .null)
            #expect(kernel["bound"] == placement.bound.map(JSONValue.string) ?? .null)
        }

        // The roofline formula, by hand: attainable = min(peak, bandwidth × FLOP/byte).
        func kernel(_ name: String) throws -> JSONValue { try #require(kernels.first { $0["name"]?.string == name }) }
        let sgemmFLOPs = 2.0 * 256 * 256 * 256 * 10
        let sgemmRate = sgemmFLOPs / 0.005 / 1e9
        let sgemmIntensity = sgemmFLOPs / (3 * 256 * 256 * 4 * 10)
        let sgemm = try kernel("sgemm")
        #expect(abs(try #require(sgemm["gflops_per_second"]?.number) - sgemmRate) < 1e-9)
        #expect(abs(try #require(sgemm["flop_per_byte"]?.number) - sgemmIntensity) < 1e-9)
        #expect(abs(try #require(sgemm["percent_of_attainable"]?.number) - sgemmRate / 200 * 100) < 1e-9)
        #expect(sgemm["bound"] == .string("compute") && sgemm["level"] == .string("DRAM"))
        let saxpy = try kernel("saxpy")
        let saxpyRate = 2.0 * 1_048_576 * 10 / 0.04 / 1e9
        #expect(abs(try #require(saxpy["attainable_gflops_per_second"]?.number) - 20.0 / 6) < 1e-9)
        #expect(abs(try #require(saxpy["percent_of_attainable"]?.number) - saxpyRate / (20.0 / 6) * 100) < 1e-9)
        #expect(saxpy["bound"] == .string("memory"))
        // No FLOPs: listed, not placed.
        let copy = try kernel("copy")
        #expect(copy["gflops_per_second"] == .null && copy["percent_of_attainable"] == .null)
        #expect(result.text.contains("<untrusted-data>") && result.text.contains("no FP32 FLOPs"))
    }

    @Test func kernelsComeAPageAtATimeAndAProfileIsPickedByNumberOrName() throws {
        let tools = Self.tools(try Self.workspace())
        let first = try tools.call("roofline_kernels", arguments: ["profile": .string("CPU"), "limit": .number(2)])
        #expect(first.structured["kernels"]?.array?.count == 2)
        let cursor = try #require(first.structured["next_cursor"]?.string)
        let rest = try tools.call(
            "roofline_kernels",
            arguments: ["limit": .number(2), "cursor": .string(cursor), "precision": .string("fp32")]
        )
        #expect(rest.structured["kernels"]?.array?.count == 1 && rest.structured["next_cursor"] == .null)
        let names = (first.structured["kernels"]?.array ?? []) + (rest.structured["kernels"]?.array ?? [])
        #expect(Set(names.compactMap { $0["name"]?.string }) == ["sgemm", "saxpy", "copy"])

        #expect(throws: ToolCallError.self) { try tools.call("roofline_kernels", arguments: ["profile": .string("2")]) }
        #expect(throws: ToolCallError.self) {
            try tools.call("roofline_kernels", arguments: ["profile": .string("H100")])
        }
        #expect(throws: ToolCallError.self) { try tools.call("roofline_kernels", arguments: ["limit": .number(0)]) }
    }

    @Test func anEmptyWorkspaceSaysHowToMeasureOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-mcp-roofline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        do {
            _ = try Self.tools(workspace).call("roofline_kernels", arguments: [:])
            Issue.record("an empty workspace answered")
        } catch {
            #expect("\(error)".contains("loupe roofline measure"))
        }
    }
}
