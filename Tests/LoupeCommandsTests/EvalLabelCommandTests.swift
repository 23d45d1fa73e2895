import Foundation
import LoupeCommands
import LoupeKit
import Testing

/// `loupe eval label`: a run named by its user, shown in `eval list` and its JSON, cleared with
/// `--clear`; a missing run or an over-long label is refused with what to do.
@Suite struct EvalLabelCommandTests {
    let session = TestEnvironment.session()
    static let log = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../sample-data/traces/inspect-arith.eval").standardized.path

    private func run(_ line: String) -> CommandOutcome {
        CommandExecutor(session: session, isInsideTUI: false).execute(line, reporter: .detached(), columns: 200)
    }

    @Test func aLabelNamesTheRunInTheListUntilCleared() throws {
        #expect(run("trace import \(Self.log)").succeeded)
        let labelled = run("eval label 1 prompt v2")
        #expect(labelled.succeeded, "\(labelled.error ?? "")")
        #expect(labelled.output.contains("run 1 is labelled “prompt v2”"))
        #expect(run("eval list").output.contains("prompt v2 · inspect:arith"))
        let json = try JSONSerialization.jsonObject(with: Data(run("eval list --json").output.utf8)) as? [[String: Any]]
        #expect(json?.first?["label"] as? String == "prompt v2")
        #expect(run("eval label 1 --clear").output.contains("run 1 has no label"))
        #expect(!run("eval list").output.contains("prompt v2"))
    }

    @Test func aMissingRunOrATooLongLabelIsRefused() throws {
        #expect(run("trace import \(Self.log)").succeeded)
        let missing = run("eval label 9 x")
        #expect(!missing.succeeded && (missing.error ?? "").contains("no eval run 9"), "\(missing.error ?? "")")
        let long = run("eval label 1 " + String(repeating: "a", count: EvalService.longestLabel + 1))
        #expect(!long.succeeded && (long.error ?? "").contains("at most \(EvalService.longestLabel) characters"))
        let empty = run("eval label 1")
        #expect(!empty.succeeded && (empty.error ?? "").contains("--clear"))
    }
}
