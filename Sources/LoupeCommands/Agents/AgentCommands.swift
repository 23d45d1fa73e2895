import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit

/// `loupe agent run "question"`: Loupe's own ReAct agent on the workspace, recorded as a trace.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent", abstract: "Run Loupe's own agent on the workspace and record its trace.",
        subcommands: [Run.self], defaultSubcommand: Run.self)

    struct Run: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer a question with the workspace's tools: search, read, calculator, sql.",
            discussion: """
                The run is recorded as a trace as it happens (the Traces panel shows it grow). \
                --provider offline (the default) needs no network: an in-process policy routes the \
                question to a tool by MiniLM similarity and answers with the sentences it read, citing \
                their chunks. --provider openai talks to any OpenAI-compatible chat-completions server \
                (OpenAI, vLLM, llama.cpp, Ollama) with tool calls and streaming; the base URL and model \
                come from the flags or $OPENAI_BASE_URL / $OPENAI_MODEL, the key from the environment \
                variable --api-key-env names, and the key is never stored. --provider local runs \
                SmolLM2-135M-Instruct in-process (loupe models fetch smollm2), its tool calls constrained \
                by a grammar from the tools' schemas; its trace keeps each token's log-probability.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The question.") var question: [String]
        @OptionGroup var options: ProviderOptions
        @Flag(help: "Print the trace as JSON at the end.") var json = false

        func run(in context: CommandContext) throws {
            let text = question.joined(separator: " ").trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { throw CommandFailure("ask a question: loupe agent run \"…\"") }
            let service = AgentService(database: try context.database(), models: context.session.models)
            let chosen = try options.provider(service)
            let limits = options.limits
            var printed = 1
            let result = try service.run(
                text, provider: chosen, limits: limits, reporter: context.reporter,
                onStep: { _, trace in
                    guard !json else { return }
                    while printed < trace.spans.count {
                        if let line = Self.describe(trace.spans[printed]) { context.print(line) }
                        printed += 1
                    }
                })
            let root = result.trace.spans[0]
            if json {
                context.print(TraceExport.export(result.trace, as: .otlp).prettyJSON)
                // The JSON holds the trace either way; the exit status says whether the agent
                // finished, as it does without --json.
                guard root.status.isError else { return }
                throw CommandExit(
                    code: 1, "the agent did not finish: \(root.status.message ?? "") (trace \(result.id))")
            }
            if let answer = root.output.first?.text {
                context.print("answer: " + UntrustedText.sanitized(answer))
            }
            if case .error(let why) = root.status { context.print("✗ " + UntrustedText.sanitized(why)) }
            context.print(
                "trace \(result.id): \(result.trace.spans.count) spans, provider \(chosen.label) — loupe trace show \(result.id)"
            )
            if root.status.isError { throw CommandFailure("the agent did not finish: \(root.status.message ?? "")") }
        }

        /// One line per span as it lands: a model call and the tools it asked for, a tool's result,
        /// or a MiniLM forward pass a tool ran (not its layers: `trace show` has those).
        static func describe(_ span: TraceSpan) -> String? {
            let status = span.status.message.map { "  ✗ " + $0 } ?? ""
            switch span.kind {
            case .llm:
                let calls = span.output.first?.toolCalls.map { "\($0.name)(\($0.arguments))" } ?? []
                let said = calls.isEmpty ? (span.output.first?.text ?? "") : "→ " + calls.joined(separator: ", ")
                return UntrustedText.sanitized("  model  \(String(said.prefix(110)))\(status)")
            case .tool:
                let result = (span.tool?.error ?? span.tool?.result ?? "").replacingOccurrences(of: "\n", with: " ⏎ ")
                return UntrustedText.sanitized("  tool   \(span.name): \(String(result.prefix(104)))\(status)")
            case .embedding where span.attributes[ForwardPassRecord.kernelRunsAttribute] != nil:
                return UntrustedText.sanitized("  pass   \(span.name), timed op by op (loupe roofline show --trace)")
            case .other where span.attributes[ForwardPassRecord.operationsAttribute] != nil:
                return nil
            default:
                return UntrustedText.sanitized("  \(span.kind.rawValue)  \(span.name)\(status)")
            }
        }
    }
}

/// Which provider answers for the agent (`agent run`, `trace fork`), and the run's limits.
struct ProviderOptions: ParsableArguments {
    @Option(help: "offline, local (SmolLM2 in-process) or openai.") var provider = "offline"
    @Option(help: "The chat-completions base URL (default $OPENAI_BASE_URL or https://api.openai.com/v1).")
    var baseURL: String?
    @Option(help: "The model (default $OPENAI_MODEL).") var model: String?
    @Option(help: "The environment variable holding the API key.") var apiKeyEnv = "OPENAI_API_KEY"
    @Flag(help: "Ask for one whole response instead of a server-sent event stream.") var noStream = false
    @Option(help: "Model calls at most (default 8; a fork: its parent's).") var maxSteps: Int?
    @Option(help: "Tokens (input + output, over all calls) at most (a fork: its parent's).") var maxTokens: Int?
    @Option(help: "Seconds at most (default 300; a fork: its parent's).") var timeout: Double?
    @Option(help: "Retries of a failed model call, backoff from 0.5 s (default 3; a fork: its parent's).")
    var retries: Int?

    /// The limits given here, each nil where none was: a fork takes the rest from its parent.
    var overrides: AgentLimits.Overrides {
        AgentLimits.Overrides(maxSteps: maxSteps, maxTokens: maxTokens, maxSeconds: timeout, retries: retries)
    }

    /// A run's limits: those given here, the defaults for the rest.
    var limits: AgentLimits { overrides.applied(to: AgentLimits()) }

    func provider(_ service: AgentService) throws -> any ChatProvider {
        let environment = ProcessInfo.processInfo.environment
        switch provider.lowercased() {
        case "offline": return service.offlinePolicy()
        case "local": return try service.localModel()
        case "openai", "openai-compatible":
            let base = baseURL ?? environment["OPENAI_BASE_URL"] ?? "https://api.openai.com/v1"
            guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https" else {
                throw CommandFailure("--base-url \(base): not an http(s) URL")
            }
            guard let name = model ?? environment["OPENAI_MODEL"] else {
                throw CommandFailure("name the model: --model NAME or $OPENAI_MODEL")
            }
            return OpenAICompatibleProvider(
                baseURL: url, model: name, apiKey: environment[apiKeyEnv], stream: !noStream,
                timeout: timeout ?? AgentLimits().maxSeconds)
        default: throw CommandFailure("--provider \(provider): use offline, local or openai")
        }
    }
}
