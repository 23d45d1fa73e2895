import Foundation
import LoupeBench
import LoupeCommands
import LoupeKit
import LoupeStore
import LoupeTUI
import Testing

@Suite struct CommandExecutorTests {
    let session = TestEnvironment.session()

    private func run(_ line: String, insideTUI: Bool = false) -> CommandOutcome {
        CommandExecutor(session: session, isInsideTUI: insideTUI).execute(line, reporter: .detached(), columns: 80)
    }

    @Test func runsCommandsOnTheSessionWorkspace() throws {
        let outcome = run("workspace info")
        #expect(outcome.succeeded)
        #expect(outcome.output.contains("workspace  w.sqlite"))
        #expect(outcome.output.contains("schema     v\(Workspace.migrationIdentifiers.count)"))
        let json =
            try JSONSerialization.jsonObject(with: Data(run("loupe workspace info --json").output.utf8))
            as? [String: Any]
        #expect(json?["schema_version"] as? Int == Workspace.migrationIdentifiers.count)
    }

    /// `profile show` reads the report the workspace keeps from the import on, and it is the
    /// same report the analysis makes.
    @Test func profileShowReadsTheKeptReport() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/profiles/distributed-2rank").standardized.path
        #expect(run("profile import \(sample) --name two").succeeded)
        let workspace = try session.workspace()
        #expect(try workspace.profiles.profilerReport(traceID: 1) != nil)
        let first = run("profile show two --top 5 --json")
        #expect(first.succeeded, "\(first.error ?? "")")
        #expect(try workspace.profiles.profilerReport(traceID: 1) != nil)
        #expect(run("profile show two --top 5 --json").output == first.output)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let shown = try decoder.decode(ProfileReport.self, from: Data(first.output.utf8))
        let service = ProfileService(workspace: workspace)
        #expect(shown == ProfileReport.make(try service.load(try service.resolve("two")), top: 5))
        #expect(shown.ranks.count == 2 && shown.ranks.allSatisfy { $0.kernels.count == 5 })
    }

    @Test func typosGetASuggestionAndUsage() {
        let outcome = run("wrkspace info")
        #expect(outcome.error?.contains("did you mean 'workspace'?") == true)
        #expect(outcome.error?.contains("Usage: loupe") == true)
        #expect(outcome.error?.hasPrefix("Error:") == false)
        #expect(run("workspace inof").error?.contains("did you mean 'workspace info'?") == true)
    }

    /// Inside the TUI a typo is named with the closest command, without the shell's usage line.
    @Test func typosInsideTheTUINameTheClosestCommand() {
        #expect(run("trce list", insideTUI: true).error == "unknown command 'trce' (did you mean 'trace'?)")
        #expect(
            run("workspace inof", insideTUI: true).error
                == "unknown command 'workspace inof' (did you mean 'workspace info'?)")
        #expect(run("zzzz", insideTUI: true).error == "unknown command 'zzzz' (help lists the commands)")
        #expect(run("trace list --bogus", insideTUI: true).error?.contains("Unknown option '--bogus'") == true)
        // A notebook's cell says the same in the TUI as in a shell.
        let cell = CommandExecutor(session: session, isInsideTUI: true).execute(
            "workspace inof", reporter: .detached(), columns: 80, place: CommandPlace(target: .open, directory: "/"))
        #expect(cell.error?.contains("Usage: loupe workspace <subcommand>") == true)
    }

    @Test func helpIsOutputNotAnError() {
        let outcome = run("help workspace")
        #expect(outcome.succeeded)
        #expect(outcome.output.contains("SUBCOMMANDS:"))
        #expect(run("workspace").output.contains("info"))
    }

    @Test func themeSwitchIsStoredAndRequestedFromTheTUI() throws {
        let outcome = run("theme light", insideTUI: true)
        #expect(outcome.output == "theme: light\n")
        guard case .applyTheme(let theme)? = outcome.requests.first else {
            Issue.record("no applyTheme request")
            return
        }
        #expect(theme.name == "light")
        #expect(try session.workspace().settings.setting("theme") == "light")
        #expect(run("theme").output.contains("light  (current)"))
        #expect(run("theme nope").error?.contains("no theme named 'nope'") == true)
    }

    @Test func shellOnlyCommandsAndOtherWorkspacesAreRefusedInsideTheTUI() {
        #expect(run("repl", insideTUI: true).error?.contains("runs in a shell") == true)
        #expect(
            run("workspace info --workspace /tmp/other.sqlite", insideTUI: true).error?.contains(
                "cannot change it here") == true)
        #expect(run("--workspace x", insideTUI: true).error?.contains("already open") == true)
    }

    /// Every command a shipped notebook uses runs inside the TUI (long ones as jobs); only the
    /// benchmarks and what opens another terminal program stay in the shell.
    @Test func theNotebooksCommandsRunInsideTheTUI() throws {
        let catalog = CommandCatalog.loupe(excludingTUIOnly: true)
        for name in ["ingest", "retrieval eval", "kernels bench", "roofline measure"] {
            #expect(catalog.entries.contains { $0.name == name }, "\(name)")
        }
        // The benches are LoupeBench's, added to the tree by the executable; here as it does.
        Loupe.register([BenchCommand.self])
        #expect(run("bench tui", insideTUI: true).error?.contains("runs in a shell") == true)
        let ingested = run("ingest /nonexistent-loupe-dir/x.jsonl", insideTUI: true)
        #expect(ingested.error?.contains("runs in a shell") != true)
    }

    /// A notebook's command runs on its scratch workspace, with its relative paths read from
    /// the notebook's repository (a parent of the notebook's folder), not the current directory.
    @Test func aPlaceRunsOnAScratchWorkspaceWithPathsFromTheNotebooksRepository() throws {
        let repository = TestEnvironment.temporaryDirectory()
        let data = "data-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: repository + "/notebooks", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: repository + "/" + data, withIntermediateDirectories: true)
        let sample = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl").path
        try FileManager.default.copyItem(atPath: sample, toPath: repository + "/" + data + "/otlp.jsonl")
        #expect(!FileManager.default.fileExists(atPath: data))

        let executor = CommandExecutor(session: session, isInsideTUI: true, scratchRoot: repository + "/scratch")
        let place = CommandPlace(target: .scratch("t.md"), directory: repository + "/notebooks")
        let outcome = executor.execute(
            "trace import \(data)/otlp.jsonl", reporter: .detached(), columns: 80, place: place)
        #expect(outcome.succeeded, "\(outcome.error ?? "")")
        let scratch = try Workspace(path: repository + "/scratch/t-md.sqlite")
        #expect(try scratch.traces.traceSummaries().count > 0)
        // The open workspace was left as it was.
        #expect(try session.workspace().traces.traceSummaries().isEmpty)

        // Paths that are not there anywhere, absolute ones and options stay as written.
        let notebooks = repository + "/notebooks"
        #expect(CommandExecutor.resolving("missing/file.jsonl", from: notebooks) == "missing/file.jsonl")
        #expect(CommandExecutor.resolving("/etc/hostname", from: notebooks) == "/etc/hostname")
        #expect(CommandExecutor.resolving("--json", from: notebooks) == "--json")
        #expect(
            CommandExecutor.resolving("--queries=\(data)/otlp.jsonl", from: notebooks)
                == "--queries=\(repository)/\(data)/otlp.jsonl")
    }

    @Test func quotingErrorsAreReported() {
        #expect(run("theme \"light").error?.contains("unterminated") == true)
        #expect(run("   ").succeeded)
    }

    @Test func theCatalogComesFromTheRealCommandTree() throws {
        let catalog = CommandCatalog.loupe(excludingTUIOnly: true)
        let info = try #require(catalog.entries.first { $0.name == "workspace info" })
        #expect(info.options.contains("--json"))
        #expect(info.options.contains("--workspace"))
        #expect(!info.needsArguments)
        #expect(catalog.entries.first { $0.name == "notebook run" }?.needsArguments == true)
        #expect(!catalog.entries.contains { $0.name == "repl" })
        #expect(CommandCatalog.loupe(excludingTUIOnly: false).entries.contains { $0.name == "repl" })
    }
}

/// The MiniLM commands on the real weights (present after scripts/fetch-minilm).
@Suite(
    .enabled(
        if: ModelLibrary.standard(environment: ProcessInfo.processInfo.environment).hasMiniLM,
        "MiniLM weights not found: run scripts/fetch-minilm"))
struct ModelCommandTests {
    let executor = CommandExecutor(session: TestEnvironment.session(), isInsideTUI: false)

    private func run(_ line: String) -> CommandOutcome { executor.execute(line, reporter: .detached(), columns: 100) }

    @Test func embedPrintsTokensIdsAndUnitVectors() throws {
        let outcome = run("embed --json \"Hello, World!\"")
        #expect(outcome.succeeded, "\(outcome.error ?? "")")
        let records = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [[String: Any]]
        let record = try #require(records?.first)
        #expect(record["tokens"] as? [String] == ["[CLS]", "hello", ",", "world", "!", "[SEP]"])
        #expect(record["ids"] as? [Int] == [101, 7592, 1010, 2088, 999, 102])
        let vector = try #require(record["embedding"] as? [Double])
        #expect(vector.count == 384)
        #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
    }

    /// --profile times the forward pass op by op, with each op's FLOPs for the tokens it ran
    /// on, and records them as kernel runs for the roofline.
    @Test func embedProfileRecordsTheForwardPassOpByOp() throws {
        let session = TestEnvironment.session()
        let executor = CommandExecutor(session: session, isInsideTUI: false)
        let outcome = executor.execute("embed --profile --json \"Hello, World!\"", reporter: .detached(), columns: 100)
        #expect(outcome.succeeded, "\(outcome.error ?? "")")
        let json = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]
        let operations = try #require(json?["operations"] as? [[String: Any]])
        let qkv = try #require(operations.first { ($0["name"] as? String)?.hasPrefix("linear Q·K·V") == true })
        // Six tokens through six layers' 384 → 3×384 projection: 2·6·384·1152 FLOPs a layer,
        // and 6·1152 for the bias.
        #expect(qkv["calls"] as? Int == 6)
        #expect(abs((qkv["gflops"] as? Double ?? 0) - 6 * (2 * 6 * 384 * 1152 + 6 * 1152) / 1e9) < 1e-9)
        let runs = try session.workspace().roofline.latestKernelRunPerShape().filter { $0.suite == "minilm-forward" }
        #expect(Set(runs.map(\.kernel)) == Set(operations.compactMap { $0["name"] as? String }))
        // One text is one batch on one thread: its time is the wall clock's, not a sum over cores.
        #expect(
            runs.allSatisfy { $0.workload == "embed: 1 text(s), 6 tokens" && $0.nanoseconds > 0 && $0.threads == 1 })
    }

    @Test func attentionChecksItsSiteAndPrintsRowsThatSumToOne() throws {
        #expect(run("attention hi --layer 6").error?.contains("out of range") == true)
        #expect(run("attention hi --head 12 --layer 0").error?.contains("out of range") == true)
        let outcome = run("attention --json \"one two\" --layer 3")
        let json = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]
        let attention = try #require(json?["attention"] as? [[[Double]]])
        #expect(attention.count == 12)
        for row in attention.joined() { #expect(abs(row.reduce(0, +) - 1) < 1e-5) }
    }
}
