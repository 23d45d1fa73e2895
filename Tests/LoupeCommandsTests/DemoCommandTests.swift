import Foundation
import LoupeCommands
import LoupeKit
import LoupeStore
import Testing

/// `loupe demo build`: a script of command lines run on the workspace, resumable where it stopped.
@Suite struct DemoCommandTests {
    let session = TestEnvironment.session()
    let directory = TestEnvironment.temporaryDirectory()

    private func run(_ line: String) -> CommandOutcome {
        CommandExecutor(session: session, isInsideTUI: false).execute(line, reporter: .detached(), columns: 100)
    }

    private func script(_ lines: [String]) throws -> String {
        let path = directory + "/demo.loupe"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private var otlp: String {
        TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl").path
    }

    private var prices: String { TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/prices.csv").path }

    @Test func aScriptRunsOnceAndASecondRunHasNothingLeftToDo() throws {
        let path = try script(["# the demo", "workspace init", "", "prices load \(prices)", "trace import \(otlp)"])
        let first = run("demo build \(path)")
        #expect(first.succeeded, "\(first.error ?? "")")
        #expect(first.output.contains("› trace import"))
        #expect(first.output.contains("demo.loupe: 3 of 3 commands ran"))
        let traces = try TraceService(workspace: session.workspace()).list().count
        #expect(traces > 0)
        let second = run("demo build \(path)")
        #expect(second.output.contains("all 3 commands already ran"))
        #expect(try TraceService(workspace: session.workspace()).list().count == traces)
        #expect(try session.workspace().settings.setting("demo.done:demo.loupe") == "3")
    }

    @Test func aStoppedScriptContinuesAtTheCommandItWasOn() throws {
        let path = try script(["workspace init", "prices load \(prices)", "trace import \(otlp)"])
        // As a build stopped during its second command leaves it: one done, the second started.
        _ = run("workspace init")
        try session.workspace().settings.setSetting("demo.done:demo.loupe", to: "1")
        try session.workspace().settings.setSetting("demo.started:demo.loupe", to: "1")
        let outcome = run("demo build \(path)")
        #expect(outcome.succeeded, "\(outcome.error ?? "")")
        #expect(!outcome.output.contains("› workspace init"))
        #expect(outcome.output.contains("› prices load") && outcome.output.contains("› trace import"))
        #expect(outcome.output.contains("2 of 3 commands ran"))
        #expect(try !TraceService(workspace: session.workspace()).list().isEmpty)
    }

    @Test func aFailingCommandNamesTheScriptLineAndIsNotMarkedDone() throws {
        let path = try script(["workspace init", "", "trace import \(directory)/missing.jsonl", "workspace check"])
        let outcome = run("demo build \(path)")
        #expect(outcome.error?.contains("demo.loupe:3: trace import") == true, "\(outcome.error ?? "")")
        #expect(try session.workspace().settings.setting("demo.done:demo.loupe") == "1")
        #expect(!outcome.output.contains("› workspace check"))
    }

    @Test func theShippedScriptsParseIntoCommands() throws {
        for name in ["demo-workspace.loupe", "demo-workspace-more.loupe"] {
            let text = try String(
                contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/" + name),
                encoding: .utf8)
            let outcome = CommandExecutor(session: session, isInsideTUI: false)
            for raw in text.split(separator: "\n") where !raw.hasPrefix("#") && !raw.isEmpty {
                // Every line is a command of the language (parsed, not run): `help` for it succeeds.
                let line = DemoScript.condition(of: String(raw))?.command ?? String(raw)
                let words = line.split(separator: " ").prefix(2).joined(separator: " ")
                let help = outcome.execute("help " + words, reporter: .detached(), columns: 100)
                #expect(help.succeeded, "\(name): \(line): \(help.error ?? "")")
            }
        }
    }

    /// `if smollm2: COMMAND` runs COMMAND where the model has been fetched, and otherwise says
    /// so and goes on, so a clone without the model still builds the rest of the demo.
    @Test func aLineThatNeedsAModelRunsOnlyWhereItIsPresent() throws {
        let path = try script(["workspace init", "if smollm2: prices load \(prices)", "trace import \(otlp)"])
        let models = directory + "/models"
        let without = WorkspaceSession(
            path: directory + "/without.sqlite", busyTimeout: 2, themes: TestEnvironment.themes,
            models: ModelLibrary(root: models))
        let skipped = CommandExecutor(session: without, isInsideTUI: false).execute(
            "demo build \(path)", reporter: .detached(), columns: 100)
        #expect(skipped.succeeded, "\(skipped.error ?? "")")
        #expect(skipped.output.contains("› skipped (smollm2 is not in \(models); scripts/fetch-smollm2): prices load"))
        #expect(skipped.output.contains("› trace import") && skipped.output.contains("3 of 3 commands ran"))
        #expect(try without.workspace().settings.setting("demo.done:demo.loupe") == "3")
        // With the file in place the command runs, without its prefix.
        let library = ModelLibrary(root: models)
        try FileManager.default.createDirectory(
            atPath: (library.smolLM2Path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: library.smolLM2Path, contents: Data())
        let with = WorkspaceSession(
            path: directory + "/with.sqlite", busyTimeout: 2, themes: TestEnvironment.themes, models: library)
        let ran = CommandExecutor(session: with, isInsideTUI: false).execute(
            "demo build \(path)", reporter: .detached(), columns: 100)
        #expect(ran.succeeded, "\(ran.error ?? "")")
        #expect(ran.output.contains("› prices load") && !ran.output.contains("skipped"))
        // A model Loupe does not know is an error naming the line.
        let unknown = try script(["workspace init", "if gpt5: workspace check"])
        let failed = run("demo build \(unknown)")
        #expect(failed.error?.contains("demo.loupe:2: unknown model 'gpt5'") == true, "\(failed.error ?? "")")
        let condition = DemoScript.condition(of: "if smollm2: agent run x")
        #expect(condition?.model == "smollm2" && condition?.command == "agent run x")
        #expect(DemoScript.condition(of: "agent run \"if x: y\"") == nil)
    }
}
