import Foundation
import LoupeKit
import LoupeStore
import Testing

/// The one rule the Roofline panel, `loupe roofline show --profile --precision` and the MCP tool
/// `roofline_kernels` choose a profile and a precision by (`RooflineModel+Selection.swift`), on the
/// sample Nsight Compute export (an H100 profile) beside measured CPU kernels without roofs.
@Suite struct RooflineSelectionTests {
    /// The workspace's model: the CPU kernels' profile (no roofs of their own), then the H100's.
    static func model() throws -> RooflineModel {
        let workspace = try KitFixtures.workspace("roofline-selection")
        _ = try RooflineBrowserTests.importExport(into: workspace)
        try workspace.roofline.record([
            KernelRun(
                suite: "bench", kernel: "sgemm", workload: "m=n=k=64", calls: 1, nanoseconds: 1_000, flops: 524_288,
                bytes: 49_152, threads: 1, machine: "this CPU", flopsByPrecision: ["FP32": 524_288])
        ])
        return try RooflineBrowser(workspace: workspace).model()
    }

    @Test func noArgumentIsTheFirstProfileAtItsFirstPrecision() throws {
        let model = try Self.model()
        try #require(model.profiles.count == 2, "\(model.profiles.map(\.name))")
        let chosen = try model.select(profile: nil, precision: nil)
        #expect(chosen.index == 0 && chosen.profile == model.profiles[0])
        #expect(chosen.precision == model.profiles[0].precisions[0] && chosen.precision == "FP32")
        // The panel's first view is the same one.
        #expect(model.profile(at: 0) == chosen.profile)
        #expect(chosen.profile.precision(at: 0) == chosen.precision)
    }

    @Test func aProfileIsNamedByNumberOrByAPieceOfItsNameWithoutCase() throws {
        let model = try Self.model()
        let cpu = try #require(model.profiles.firstIndex { $0.kind == "cpu" })
        #expect(try model.select(profile: "\(cpu + 1)", precision: nil).index == cpu)
        let gpu = try #require(model.profiles.firstIndex { $0.kind == "gpu" })
        #expect(try model.select(profile: "h100", precision: nil).index == gpu)
        #expect(try model.select(profile: "H100", precision: nil).profile.name.contains("H100"))
    }

    /// A precision is matched without case and spelled as the profile spells it; one the profile
    /// has neither roofs nor FLOPs in is kept (upper-cased), so the result says it places nothing.
    @Test func aPrecisionIsSpelledAsTheProfileSpellsIt() throws {
        let model = try Self.model()
        let gpu = try model.select(profile: "h100", precision: nil).profile
        for precision in gpu.precisions {
            #expect(try model.select(profile: "h100", precision: precision.lowercased()).precision == precision)
        }
        #expect(gpu.precision(named: "int4") == "INT4")
        #expect(gpu.placements("INT4").allSatisfy { $0.gflopsPerSecond == nil })
        // The panel's `f` steps through the same list and stays on the last past its end.
        #expect(gpu.precisions.indices.map { gpu.precision(at: $0) } == gpu.precisions)
        #expect(gpu.precision(at: gpu.precisions.count + 3) == gpu.precisions.last)
        #expect(model.profile(at: 99) == model.profiles.last)
    }

    @Test func aProfileThatIsNotThereIsSaidPlainlyInTheCallersWords() throws {
        typealias Failure = RooflineModel.SelectionError
        let model = try Self.model()
        let past = #expect(throws: Failure.self) {
            try model.select(profile: "3", precision: nil, argument: "--profile")
        }
        #expect(past?.description == "--profile 3: the workspace has 2 profiles")
        let zero = #expect(throws: Failure.self) {
            try model.select(profile: "0", precision: nil, argument: "--profile")
        }
        #expect(zero?.reason == .noSuchNumber(0, count: 2))
        // A name is the caller's text: its control characters are shown, never sent raw.
        let unknown = #expect(throws: Failure.self) {
            try model.select(profile: "a100\u{1B}[2J", precision: nil, argument: "roofline_kernels: profile")
        }
        let text = unknown?.description ?? ""
        #expect(text.hasPrefix("roofline_kernels: profile a100") && !text.contains("\u{1B}"), "\(text)")
        #expect(text.hasSuffix(" matches") && text.contains("H100"), "\(text)")
        let empty = try RooflineBrowser(workspace: try KitFixtures.workspace("roofline-none")).model()
        #expect(empty.profile(at: 0) == nil)
        let none = #expect(throws: Failure.self) { try empty.select(profile: nil, precision: "FP32") }
        #expect(none?.reason == .noProfiles)
        #expect(none?.description.contains("run `loupe roofline measure`") == true)
    }
}
