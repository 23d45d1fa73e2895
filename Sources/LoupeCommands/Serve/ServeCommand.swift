import ArgumentParser
import Dispatch
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeReceiver
import LoupeServing
import LoupeStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `loupe serve`: Loupe as an OTLP endpoint, headless, for a box that collects a team's traces.
struct ServeCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive traces over OTLP (HTTP on 4318, gRPC on 4317) into the workspace.",
        discussion: """
            Point an agent at it with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 and \
            OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (or grpc with port 4317). A request is answered \
            only once its spans are committed; a trace grows as its spans arrive, in any order and over \
            many requests, and a batch sent twice changes nothing. When the queue is full it answers 503 \
            (gRPC UNAVAILABLE) so exporters back off. It binds loopback unless a token is given; with a \
            token every request must carry `Authorization: Bearer TOKEN`. SIGINT or SIGTERM stops taking \
            requests, commits those in flight and exits.

            One client cannot shut out the others: a body is read whole before it is decoded, within \
            --body-timeout seconds and, after --body-grace seconds, at --min-body-rate bytes/s or faster (else \
            408 and its connection closed); the bodies and gRPC messages of all clients being read share \
            --body-budget-mb MiB (past it, 503 and a retry); a gRPC connection has at most --max-streams calls \
            open at once.

            With --openai-port it also speaks OpenAI's API on that port (same address and token): \
            /v1/models, /v1/chat/completions and /v1/completions answered by the local model \
            (SmolLM2-135M-Instruct), up to --openai-batch sequences decoded together (continuous batching: \
            requests join and leave between decode steps and share cached prompt prefixes; 1: one at a time) \
            behind a queue of --openai-queue requests (past it, 429 with Retry-After); each request is stored \
            as a trace. Point a client at it with base_url http://127.0.0.1:PORT/v1. \
            --speculate prompt-lookup decodes each request with prompt-lookup drafts, batched or not (the \
            same tokens, fewer passes); its trace carries the acceptance rate \
            (loupe.speculative.acceptance_rate). --steer FEATURE:α and --ablate FEATURE steer every answer \
            with an SAE feature as loupe generate's do (the newest finished SmolLM2 SAE, or --sae ID); each \
            trace names the SAE, its layer and the features (loupe.steering.*).
            """)

    static let runsInsideTUI = false

    @OptionGroup var global: GlobalOptions
    @OptionGroup var receiver: ReceiverOptions
    @Option(help: "The most spans waiting to be stored; past it requests get 503 and are retried.")
    var queue = 16_384
    @Option(
        name: .customLong("openai-port"),
        help: ArgumentHelp(
            "Also serve OpenAI's API (/v1/chat/completions…) from the local model on this port (0: any free one).",
            valueName: "port"))
    var openAIPort: Int?
    @Option(
        name: .customLong("openai-queue"),
        help: "The most OpenAI requests running or waiting at once; past it they get 429 and are retried.")
    var openAIQueue = 16
    @Option(
        name: .customLong("openai-batch"),
        help: ArgumentHelp(
            "The most OpenAI requests decoded together in one pass over the weights (1: one at a time; "
                + "greedy answers are the same bits either way).",
            valueName: "sequences"))
    var openAIBatch = 16
    @OptionGroup var speculation: SpeculationFlags
    @Option(
        help: ArgumentHelp(
            "Steer every answer with an SAE feature: add α × its decoder direction at the SAE's layer "
                + "(repeatable).", valueName: "feature:α"))
    var steer: [String] = []
    @Option(
        help: ArgumentHelp("Remove an SAE feature's contribution from every answer (repeatable).", valueName: "feature")
    )
    var ablate: [Int] = []
    @Option(help: "The SAE --steer and --ablate use (default: the newest finished SmolLM2 SAE).") var sae: Int64?

    func run(in context: CommandContext) throws {
        let configuration = try receiver.configuration(environment: ProcessInfo.processInfo.environment)
        guard queue >= 1 else { throw CommandFailure("--queue \(queue): give at least 1") }
        // A SQLite file, or PostgreSQL from a URL (a team's one place to send traces to).
        let ingest = TraceIngest(
            tables: try context.traceTables(), capacity: queue, byteBudget: configuration.bodyBudgetBytes)
        let server: TraceReceiver
        do {
            server = try TraceReceiver(configuration: configuration, ingest: ingest)
        } catch {
            ingest.drain()
            throw CommandFailure(error.description)
        }
        let needsToken = configuration.token != nil
        let openAI = try startOpenAI(configuration: configuration, ingest: ingest, context: context)
        defer { openAI?.server.stop() }
        // The first signal stops taking requests and commits those in flight; a second leaves at
        // once (everything acknowledged is already committed). The same signal again within half a
        // second is the first one delivered twice, not a second request: `timeout` and a terminal's
        // Ctrl-C send it to the process and to its group, and loupe serve can be both. The
        // handlers are in place before the first line says where it listens, so a script that
        // signals on reading it never meets the default action.
        let stop = Mutex<(serving: TraceReceiver.Serving?, first: (number: Int32, atNanoseconds: UInt64)?)>((nil, nil))
        let stopping = Signals.onInterrupt { number in
            let now = DispatchTime.now().uptimeNanoseconds
            let (again, serving) = stop.withLock { state -> (Bool, TraceReceiver.Serving?) in
                guard let earlier = state.first else {
                    state.first = (number, now)
                    return (false, state.serving)
                }
                let again =
                    earlier.number != number || now - earlier.atNanoseconds >= Signals.repeatWindowNanoseconds
                return (again, state.serving)
            }
            if !again {
                // The OpenAI answers in flight finish and store their traces before the ingest drains.
                openAI?.server.stop()
                serving?.requestStop()
            } else {
                FileHandle.standardError.write(Data("loupe serve: stopping at once\n".utf8))
                _exit(128 + number)
            }
        }
        let serving = server.start { addresses in
            context.print(
                Listener.listening(addresses, workspace: context.session.displayPath, token: needsToken)
                    + (openAI.map { ", OpenAI http://\($0.address)/v1" } ?? ""))
        }
        // A signal that came while it started stops it now.
        if stop.withLock({ state in
            state.serving = serving
            return state.first != nil
        }) {
            serving.requestStop()
        }
        defer { stopping.restore() }
        let done = Atomic<Bool>(false)
        let progressStopped = DispatchSemaphore(value: 0)
        let progress = Thread {
            var last = ingest.statistics
            var ticks = 0
            while !done.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.1)
                ticks += 1
                guard ticks % 50 == 0 else { continue }
                let now = ingest.statistics
                if now.requests != last.requests || now.refused != last.refused {
                    context.print(Listener.line(now))
                }
                last = now
            }
            progressStopped.signal()
        }
        progress.start()
        defer {
            done.store(true, ordering: .relaxed)
            progressStopped.wait()
        }
        do {
            try serving.wait()
        } catch {
            throw CommandFailure("the OTLP receiver stopped: \(UntrustedText.sanitized("\(error)"))")
        }
        context.print("stopped: " + Listener.line(ingest.statistics))
        if let notRecorded = openAI?.server.tracesNotRecorded { context.print(notRecorded) }
    }
}

extension ServeCommand {
    /// The OpenAI endpoint on --openai-port, with the model loaded; nil without the flag.
    fileprivate func startOpenAI(
        configuration: ReceiverConfiguration, ingest: TraceIngest, context: CommandContext
    ) throws -> (server: OpenAIServer, address: String)? {
        guard let port = openAIPort else { return nil }
        guard (0...65535).contains(port) else { throw CommandFailure("--openai-port \(port): use 0 to 65535") }
        guard openAIQueue >= 1 else { throw CommandFailure("--openai-queue \(openAIQueue): give at least 1") }
        guard openAIBatch >= 1 else { throw CommandFailure("--openai-batch \(openAIBatch): give at least 1") }
        if port != 0, [configuration.httpPort, configuration.grpcPort].contains(port) {
            throw CommandFailure("--openai-port \(port) is also an OTLP port; give it a port of its own")
        }
        if ReceiverConfiguration.isInUse(host: configuration.host, port: port) {
            throw CommandFailure(
                "port \(port) on \(configuration.host) is in use; pick another with --openai-port PORT (0: any free one)"
            )
        }
        let speculative = try speculation.options()
        let (generator, steering) = try steeredModel(context: context)
        let scheduler: any CompletionScheduler =
            openAIBatch == 1
            ? SerialScheduler(
                generator: generator, modelName: ModelLibrary.smolLM2Name, capacity: openAIQueue,
                speculation: speculative)
            : BatchScheduler(
                generator: generator, modelName: ModelLibrary.smolLM2Name, capacity: openAIQueue,
                maxSequences: openAIBatch, speculation: speculative)
        let server = OpenAIServer(
            configuration: try configuration.validated(), port: port, scheduler: scheduler, ingest: ingest,
            traceAttributes: steering)
        do {
            return (server, try server.start())
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}

extension ServeCommand {
    /// SmolLM2 (q8), steered by --steer and --ablate when given (as `loupe generate --steer`
    /// steers it: ``SAEIntervention``'s hook, run by both schedulers), and the attributes its
    /// traces carry to say so.
    fileprivate func steeredModel(context: CommandContext) throws -> (Generator, JSONObject) {
        let plain = try context.session.models.smolLM2(precision: .q8)
        guard !steer.isEmpty || !ablate.isEmpty else { return (plain, [:]) }
        return try SAECommand.plainly {
            let steers = try steer.map { try SAESteering.Steer(parsing: $0) }
            let (id, layer, sae) = try SAESteering(
                database: try context.database(access: .read), models: context.session.models
            ).languageModelSAE(self.sae)
            let hook = try SAEIntervention(sae: sae, layer: layer).steering(
                steers.map { ($0.feature, $0.alpha) }, ablating: ablate)
            let model = try plain.model.hooked(hook)
            let attributes: JSONObject = [
                "loupe.steering.sae": .number(Double(id)), "loupe.steering.layer": .number(Double(layer)),
                "loupe.steering.steer": .array(steers.map { .string("\($0.feature):\($0.alpha)") }),
                "loupe.steering.ablate": .array(ablate.map { .number(Double($0)) }),
            ]
            return (Generator(model: model, tokenizer: plain.tokenizer, template: plain.template), attributes)
        }
    }
}

/// SIGINT and SIGTERM delivered to a closure (on a dispatch queue) instead of ending the process,
/// until ``restore()``.
enum Signals {
    struct Handle {
        fileprivate var sources: [any DispatchSourceSignal]

        func restore() {
            for source in sources { source.cancel() }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    /// How soon the same signal again counts as the first delivered twice (to the process and to
    /// its group), in nanoseconds.
    static let repeatWindowNanoseconds: UInt64 = 500_000_000

    /// - Parameter body: called with the signal's number; signals that arrive together before it
    ///   runs are one call.
    static func onInterrupt(_ body: @escaping @Sendable (Int32) -> Void) -> Handle {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { body(number) }
            source.resume()
            sources.append(source)
        }
        Interrupt.unblockTerminationSignals()
        return Handle(sources: sources)
    }
}
