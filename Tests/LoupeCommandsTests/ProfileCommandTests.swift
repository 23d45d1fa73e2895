import Foundation
import LoupeCommands
import LoupeKit
import Testing

/// `loupe profile list|kernels|show` on the trace the walkthrough held out (rank 1 of HTA's
/// 2-rank set, alone): each states the window its figures are of, and they are HTA's.
@Suite struct ProfileCommandTests {
    let session = TestEnvironment.session()
    static let heldOut = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../sample-data/profiles/distributed-2rank/sampled_rank-1.json.gz").standardized.path

    private func run(_ line: String) -> CommandOutcome {
        CommandExecutor(session: session, isInsideTUI: false).execute(line, reporter: .detached(), columns: 200)
    }

    /// The kernels say which steps they are of; --all-steps brings the last one back.
    @Test func kernelsStateTheirWindow() throws {
        #expect(run("profile import \(Self.heldOut) --name held").succeeded)
        let kernels = run("profile kernels held --top 3")
        #expect(kernels.succeeded, "\(kernels.error ?? "")")
        #expect(
            kernels.output.contains(
                "window: ProfilerSteps 1–1 of 2 (last left out, as HTA) · GPU span 600.674 ms"),
            "\(kernels.output)")
        #expect(kernels.output.contains("% of summed kernel time 306.242 ms"))
        let nccl = try #require(kernels.output.split(separator: "\n").first { $0.contains("ncclKernel_SendRecv") })
        #expect(nccl.contains("168.027") && nccl.contains("54.9"), "\(nccl)")
        let all = run("profile kernels held --top 3 --all-steps")
        #expect(all.output.contains("window: ProfilerSteps 1–2 of 2 (all) · GPU span 1231.186 ms"), "\(all.output)")
        let ncclAll = try #require(all.output.split(separator: "\n").first { $0.contains("ncclKernel_SendRecv") })
        #expect(ncclAll.contains("379.053") && ncclAll.contains("56.8"), "\(ncclAll)")
    }

    /// The list's span is the window's, the one `show` states, from the import on (it is
    /// analysed then): not the whole recording's 3,366 ms, and never "—".
    @Test func theListShowsTheWindowsSpan() throws {
        let imported = run("profile import \(Self.heldOut) --name held")
        #expect(imported.succeeded)
        #expect(
            imported.output.contains("window: ProfilerSteps 1–1 of 2 (last left out, as HTA) · GPU span 600.674 ms"),
            "\(imported.output)")
        #expect(run("profile list").output.contains("600.674  held"))
        let show = run("profile show held")
        #expect(show.output.contains("window: ProfilerSteps 1–1 of 2 (last left out, as HTA) · GPU span 600.674 ms"))
        #expect(show.output.contains("rank 1 · GPU span 600.674 ms · summed kernel time 306.242 ms"), "\(show.output)")
        let list = run("profile list").output
        #expect(list.contains("600.674  held") && !list.contains("3366"), "\(list)")
    }
}
