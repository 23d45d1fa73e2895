import ArgumentParser
import LoupeKit
import Synchronization

/// `loupe`: with no subcommand it opens the TUI; every subcommand is also a `:` command in
/// the TUI, a line in `loupe repl` and a line in a notebook.
package struct Loupe: ParsableCommand {
    package static let version = "0.1.0"

    package static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "loupe",
            abstract: "A keyboard-driven terminal workbench for AI engineers.",
            discussion: """
                Run without a subcommand to open the TUI on the workspace (./loupe.sqlite, \
                $LOUPE_WORKSPACE or --workspace). Every subcommand also works as a :command inside \
                the TUI, as a line in `loupe repl` and in notebooks.
                """,
            version: version,
            subcommands: [
                WorkspaceCommand.self, GenerateCommand.self, ChatCommand.self, LogitsCommand.self, TokenizeCommand.self,
                EmbedCommand.self,
                SimilarityCommand.self,
                AttentionCommand.self, LensCommand.self, HeadsCommand.self,
                ModelsCommand.self, IngestCommand.self, SearchCommand.self, QrelsCommand.self, RetrievalCommand.self,
                TraceCommand.self, SessionCommand.self, PricesCommand.self, AgentCommand.self, EvalCommand.self,
                ReviewCommand.self, DatasetCommand.self,
                SAECommand.self,
                KernelsCommand.self, RooflineCommand.self, ProfileCommand.self, ThemeCommand.self, NotebookCommand.self,
                ReplCommand.self, HistoryCommand.self, DemoCommand.self, ServeCommand.self, ListenCommand.self,
                MCPCommand.self,
            ] + added.withLock { $0 } + [DocsCommand.self]
        )
    }

    /// The groups the executable adds to the tree before anything parses: `bench`, from
    /// LoupeBench, which sits above both this module and the TUI. They are listed before
    /// `docs`, and run everywhere a built-in command runs (CLI, `:` line, REPL, notebooks).
    private static let added = Mutex<[any ParsableCommand.Type]>([])

    /// Adds `commands` to the tree (once each); the composition root calls it first thing.
    package static func register(_ commands: [any ParsableCommand.Type]) {
        added.withLock { list in
            for command in commands where !list.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(command) }) {
                list.append(command)
            }
        }
    }

    @OptionGroup package var global: GlobalOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Colour theme for this session: default, light, high-contrast, mono or a file's name in themes/.",
            valueName: "name"))
    package var theme: String?

    @Option(
        name: .customLong("run"),
        help: ArgumentHelp(
            "A command to run as a job as soon as the TUI is open (repeat for more).",
            valueName: "command"))
    package var jobs: [String] = []

    @Option(
        name: .customLong("notebooks"),
        help: ArgumentHelp(
            "A folder of notebooks for the Notebooks panel, searched first (repeat for more; $LOUPE_NOTEBOOKS too).",
            valueName: "dir"))
    package var notebookDirectories: [String] = []

    @Flag(
        help: ArgumentHelp(
            "Receive traces over OTLP while the TUI is open (HTTP 127.0.0.1:4318, gRPC 127.0.0.1:4317): they show live in Traces."
        ))
    package var listen = false

    package init() {}

    package func run() throws {
        throw CleanExit.message("internal: the TUI is opened by the Loupe dispatcher")
    }
}
