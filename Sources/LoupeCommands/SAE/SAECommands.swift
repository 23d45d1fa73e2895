import ArgumentParser
import Foundation
import Glibc
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTUI

/// The residual streams an SAE can read: `--model` of `sae collect` and `sae train`.
enum SAESource: String, ExpressibleByArgument, CaseIterable {
    case minilm, smollm2

    /// The model name its activation sets are stored under.
    var storedName: String {
        switch self {
        case .minilm: ModelLibrary.miniLMName
        case .smollm2: SAEService.languageModelName
        }
    }
}

/// `loupe sae collect|train|list|show|…`: sparse autoencoders on MiniLM's or SmolLM2's residual
/// stream.
struct SAECommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sae",
        abstract: "Collect MiniLM or SmolLM2 activations, train sparse autoencoders on them, steer with them.",
        subcommands: [
            Collect.self, Train.self, List.self, Show.self, Features.self, Feature.self, Label.self, Activate.self,
            Steer.self, At.self,
        ])

    static func service(_ context: CommandContext) throws -> SAEService {
        SAEService(database: try context.database(), models: context.session.models)
    }

    static func plainly<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SAEError {
            throw CommandFailure(error.description)
        } catch let error as ModelError {
            throw CommandFailure(error.description)
        }
    }

    struct Collect: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run MiniLM or SmolLM2 over the workspace's chunks and keep the residual stream after a layer.",
            discussion: """
                MiniLM: every real token but [CLS] and [SEP] becomes a row. SmolLM2 (--model smollm2, \
                q8, layers 0…29, 576 wide): each chunk as raw text, its first 256 tokens, every token \
                but the first (the attention sink) becomes a row. Rows are float16, in shards of 4,096 \
                rows in the workspace, with the chunk, position and token they came from, until \
                --tokens rows.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The model whose residual stream to read: minilm or smollm2.") var model = SAESource.minilm
        @Option(help: "The layer whose output to keep (MiniLM 0…5, SmolLM2 0…29).") var layer = 3
        @Option(help: "Rows to collect.") var tokens = 100_000
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let collected = try SAECommand.plainly {
                let service = try SAECommand.service(context)
                return model == .smollm2
                    ? try service.collectLanguageModel(layer: layer, tokens: tokens, reporter: context.reporter)
                    : try service.collect(layer: layer, tokens: tokens, reporter: context.reporter)
            }
            if json {
                return context.print(
                    try Formatting.json([
                        "set": Double(collected.set), "rows": Double(collected.rows),
                        "chunks": Double(collected.chunks),
                        "seconds": collected.seconds,
                        "tokens_per_second": Double(collected.rows) / max(collected.seconds, 1e-9),
                    ]))
            }
            context.print(
                String(
                    format: "activation set %lld: %d tokens after layer %d from %d chunks in %.1f s (%.0f tokens/s)",
                    collected.set, collected.rows, layer, collected.chunks, collected.seconds,
                    Double(collected.rows) / max(collected.seconds, 1e-9)))
        }
    }

    struct Train: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Train a sparse autoencoder on collected activations (TopK by default, or ReLU + L1).",
            discussion: """
                TopK keeps the k largest pre-activations (with an auxiliary loss that revives dead \
                latents); --l1 trains ReLU with an L1 penalty scaled by decoder norms instead. Inputs are \
                scaled to mean norm √d, the pre-encoder bias starts at their mean; Adam with a warm-up \
                and a final linear decay. Checkpoints go into the workspace: --resume ID continues a run \
                that was stopped.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The activation set (default: the newest for --layer and --model).") var set: Int64?
        @Option(help: "Only activation sets of this model: minilm or smollm2.") var model: SAESource?
        @Option(help: "The layer whose newest activation set to use.") var layer: Int?
        @Option(help: "SmolLM2 SAEs: next-token predictions the fidelity (loss spliced in) scores.")
        var fidelityTokens = 2048
        @Option(help: "Latents.") var width = 3072
        @Option(help: "TopK's k.") var k: Int?
        @Option(help: "Train ReLU with this L1 coefficient instead of TopK.") var l1: Float?
        @Option(help: "Steps.") var steps = 2000
        @Option(help: "Tokens per step.") var batch = 1024
        @Option(help: "Adam's learning rate.") var lr: Float = 4e-4
        @Option(help: "Continue this SAE from its last checkpoint.") var resume: Int64?
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            if k != nil && l1 != nil { throw CommandFailure("choose --k (TopK) or --l1 (ReLU), not both") }
            var options = SAEService.TrainOptions()
            options.width = width
            options.k = l1 == nil ? (k ?? 32) : nil
            options.l1 = l1 ?? 5
            options.steps = steps
            options.batch = batch
            options.learningRate = lr
            // Ctrl-C or SIGTERM stops training at the next step and keeps a checkpoint there.
            let trained = try SAECommand.plainly {
                try Interrupt.cancellable(context, work: "training") {
                    try SAECommand.service(context).train(
                        set: set, layer: layer, source: model?.storedName, options: options, resume: resume,
                        fidelityTokens: fidelityTokens, reporter: context.reporter)
                }
            }
            if !context.isInsideTUI, trained.metrics == nil, let number = Interrupt.lastSignal {
                throw CommandExit(
                    code: 128 + number,
                    "SAE \(trained.model) stopped by \(number == SIGTERM ? "SIGTERM" : "SIGINT") at step \(trained.step), "
                        + "checkpoint kept; loupe sae train --resume \(trained.model) goes on")
            }
            if json {
                var out: [String: Double] = [
                    "model": Double(trained.model), "step": Double(trained.step), "set": Double(trained.set),
                    "tokens_per_second": trained.tokensPerSecond,
                ]
                if let m = trained.metrics {
                    out["l0"] = m.l0
                    out["fvu"] = m.fvu
                    out["dead_fraction"] = m.deadFraction
                    out["embedding_fidelity"] = m.embeddingFidelity
                    if let lm = m.languageModelFidelity {
                        out["explained_variance"] = m.explainedVariance
                        out["clean_loss"] = lm.cleanLoss
                        out["spliced_loss"] = lm.splicedLoss
                        out["zero_ablated_loss"] = lm.zeroAblatedLoss
                        out["loss_recovered"] = lm.lossRecovered
                    }
                }
                return context.print(try Formatting.json(out))
            }
            context.print(
                "SAE \(trained.model)\(trained.resumed ? " (resumed)" : "") on activation set \(trained.set): "
                    + "step \(trained.step), "
                    + String(format: "%.0f tokens/s", trained.tokensPerSecond))
            if let metrics = trained.metrics {
                SAECommand.printMetrics(metrics, context)
            } else {
                context.print("stopped before its last step: loupe sae train --resume \(trained.model) continues it")
            }
        }
    }

    static func printMetrics(_ m: SAEMetrics, _ context: CommandContext) {
        context.print(
            String(
                format:
                    "on %d tokens: L0 %.1f  MSE %.4f  explained variance %.3f (FVU %.3f)  cosine %.3f  l2 ratio %.3f",
                m.tokens, m.l0, m.mse, m.explainedVariance, m.fvu, m.cosine, m.l2Ratio))
        context.print(
            String(format: "dead %.1f%%  dense (>10%% of tokens) %.1f%%", m.deadFraction * 100, m.denseFraction * 100)
                + (m.embeddingFidelity.map {
                    String(format: "  embedding fidelity %.4f (cosine, reconstruction spliced in vs clean)", $0)
                } ?? ""))
        if let lm = m.languageModelFidelity {
            context.print(
                "SmolLM2 next-token loss on \(lm.tokens) \(lm.heldOut ? "held-out " : "")tokens: "
                    + String(
                        format: "clean %.4f  SAE spliced in %.4f  zero-ablated %.4f  (%.1f%% of the loss recovered)",
                        lm.cleanLoss, lm.splicedLoss, lm.zeroAblatedLoss, lm.lossRecovered * 100))
        }
        let labels = stride(from: -7.0, to: 0.0, by: 0.5).map { String(format: "%.1f", $0) }
        let most = max(1, m.densityHistogram.max() ?? 1)
        context.print("log10 firing frequency of live latents:")
        for (label, count) in zip(labels, m.densityHistogram) where count > 0 {
            context.print(
                "  " + label.padded(to: 5) + String(repeating: "█", count: max(1, count * 40 / most)) + " \(count)")
        }
    }

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Activation sets and SAEs in the workspace.")

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print the SAEs as JSON (settings, metrics, training log).") var json = false

        func run(in context: CommandContext) throws {
            let database = try context.database(access: .read)
            let listings = try SAECommand.plainly {
                try SAEBrowser(database: database, models: context.session.models).listings()
            }
            if json { return context.print(try Formatting.json(listings)) }
            let sets = try SAETables(database).activationSets()
            guard !sets.isEmpty else { return context.print("no activations yet: loupe sae collect --layer 3") }
            context.print("activation sets")
            for set in sets {
                let partial =
                    set.complete
                    ? ""
                    : "  partial: \(set.rows) of \(set.plannedRows ?? set.rows) rows (collection stopped; not used for training)"
                context.print(
                    "  \(set.id)  layer \(set.layer)  \(set.rows) tokens × \(set.dimensions)  \(set.model)\(partial)")
            }
            guard !listings.isEmpty else { return context.print("no SAEs yet: loupe sae train --layer 3") }
            context.print("SAEs")
            for sae in listings {
                context.print(
                    "  \(sae.id)  layer \(sae.layer)\(sae.source == SAEService.languageModelName ? " of SmolLM2" : "")"
                        + "  width \(sae.width)  \(sae.kind)  step \(sae.step)/\(sae.steps)"
                        + (sae.metrics.map {
                            String(format: "  L0 %.1f  FVU %.3f  dead %.1f%%", $0.l0, $0.fvu, $0.deadFraction * 100)
                        } ?? "  (not finished)"))
            }
        }
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "An SAE's settings, training curve and metrics.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id.") var id: Int64

        func run(in context: CommandContext) throws {
            let tables = SAETables(try context.database(access: .read))
            guard let model = try tables.saeModelHeader(id) else { throw CommandFailure("there is no SAE \(id)") }
            context.print("SAE \(id) · layer \(model.layer) · width \(model.width) · step \(model.step)")
            context.print("settings \(model.settingsJSON)")
            let log = try tables.saeTrainingLog(id)
            if !log.isEmpty {
                context.print("loss  " + Sparkline(values: log.map(\.loss)).glyphs(width: 60))
                context.print("L0    " + Sparkline(values: log.map(\.l0)).glyphs(width: 60))
                context.print("FVU   " + Sparkline(values: log.map(\.fvu)).glyphs(width: 60))
                context.print("dead  " + Sparkline(values: log.map(\.dead)).glyphs(width: 60))
            }
            // Printed last: metrics that do not read back fail the command after the rest shows.
            if let json = model.metricsJSON { SAECommand.printMetrics(try SAEMetrics.stored(json, sae: id), context) }
        }
    }

    struct Features: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "An SAE's features with density (fraction of tokens it fires on), largest activation, label.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id.") var id: Int64
        @Option(help: "density or max.") var sort = "density"
        @Option(help: "Features listed.") var top = 20
        @Flag(help: "Print JSON (every feature).") var json = false

        func run(in context: CommandContext) throws {
            let index = try SAECommand.plainly { try SAEFeatureIndex(model: id, database: try context.database()) }
            var features = index.summaries
            switch sort {
            case "density": features.sort { ($0.density, $0.feature) > ($1.density, $1.feature) }
            case "max": features.sort { ($0.maxActivation, $0.feature) > ($1.maxActivation, $1.feature) }
            default: throw CommandFailure("--sort \(sort): use density or max")
            }
            if json { return context.print(try Formatting.json(features)) }
            context.print("feature   density   max act  label")
            for feature in features.prefix(top) {
                context.print(
                    String(format: "%7d  %8.5f  %8.3f  ", feature.feature, feature.density, feature.maxActivation)
                        + UntrustedText.sanitized(feature.label ?? ""))
            }
        }
    }

    struct Feature: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "One feature's card: top contexts by activation quantile, histogram, nearest tokens and features.",
            discussion: """
                Contexts are the activating token with ±8 tokens of its chunk, the feature's activation \
                on each ([token:activation] where it fires). Nearest tokens compare the decoder \
                direction with MiniLM's word-embedding matrix (the input embeddings, used as a \
                vocabulary projection; an encoder has no unembedding).
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id.") var id: Int64
        @Argument(help: "The feature.") var feature: Int
        @Flag(help: "Print JSON.") var json = false
        @Option(name: .shortAndLong, help: "Write the card as JSON here.") var output: String?

        func run(in context: CommandContext) throws {
            let database = try context.database()
            let card = try SAECommand.plainly {
                try SAEFeatureIndex(model: id, database: database).card(
                    feature, database: database, models: context.session.models)
            }
            if let output {
                try (try card.json() + "\n").write(toFile: output, atomically: true, encoding: .utf8)
                return context.print("wrote feature \(feature) of SAE \(id) to \(output)")
            }
            if json { return context.print(try card.json()) }
            context.print(
                "SAE \(id) feature \(feature)" + (card.label.map { " · \(UntrustedText.sanitized($0))" } ?? "")
                    + String(format: " · density %.5f · max %.3f", card.density, card.maxActivation))
            // SmolLM2's byte-level pieces carry their own spaces; WordPiece's are joined with one.
            let separator = card.source == SAEService.languageModelName ? "" : " "
            for group in card.groups {
                context.print(group.name)
                for item in group.contexts {
                    let text = zip(item.tokens, item.activations).enumerated().map { index, pair in
                        let token = UntrustedText.sanitized(pair.0)
                        return pair.1 > 0 ? "[\(token):\(String(format: "%.2f", pair.1))]" : token
                    }.joined(separator: separator)
                    context.print(String(format: "  %7.3f  ", item.activation) + text)
                }
            }
            let most = max(1, card.histogram.max() ?? 1)
            context.print("activations (10 bins up to the max):")
            for (bin, count) in card.histogram.enumerated() {
                context.print(
                    String(
                        format: "  %4.2f–%4.2f ", Float(bin) / 10 * card.maxActivation,
                        Float(bin + 1) / 10 * card.maxActivation)
                        + String(repeating: "█", count: count * 30 / most) + " \(count)")
            }
            if !card.vocabulary.isEmpty {
                context.print(
                    "nearest tokens (MiniLM word embeddings): "
                        + card.vocabulary.map {
                            "\(UntrustedText.sanitized($0.name)) \(String(format: "%.2f", $0.cosine))"
                        }
                        .joined(separator: ", "))
            }
            for (title, tokens) in [("promotes", card.promotes), ("suppresses", card.suppresses)] {
                guard let tokens, !tokens.isEmpty else { continue }
                context.print(
                    "\(title) (the direction through SmolLM2's final norm and unembedding): "
                        + tokens.map {
                            "\(UntrustedText.sanitized($0.name).debugDescription) \(String(format: "%.2f", $0.cosine))"
                        }
                        .joined(separator: ", "))
            }
            context.print(
                "nearest features (decoder cosine): "
                    + card.neighbors.map { "\($0.name) \(String(format: "%.2f", $0.cosine))" }.joined(separator: ", "))
        }
    }

    struct Label: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Name a feature (an empty label removes it).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id.") var id: Int64
        @Argument(help: "The feature.") var feature: Int
        @Argument(help: "The label.") var label: String

        func run(in context: CommandContext) throws {
            let tables = SAETables(try context.database())
            guard let model = try tables.saeModelHeader(id) else { throw CommandFailure("there is no SAE \(id)") }
            guard (0..<model.width).contains(feature) else {
                throw CommandFailure("feature \(feature): SAE \(id) has features 0…\(model.width - 1)")
            }
            try tables.setSAEFeatureLabel(model: id, feature: feature, label: label)
            context.print(label.isEmpty ? "removed the label of feature \(feature)" : "labelled feature \(feature)")
        }
    }

    struct Activate: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run the SAE's model (MiniLM or SmolLM2) and the SAE on a text: each token's strongest features, or one feature's activations."
        )

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id.") var id: Int64
        @Argument(help: "The text.") var text: String
        @Option(help: "Show this feature's activation on every token.") var feature: Int?
        @Option(help: "Features per token.") var top = 3
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let result = try SAECommand.plainly {
                try SAETextActivations(
                    text: text, model: id, database: try context.database(), models: context.session.models)
            }
            if json { return context.print(try Formatting.json(result)) }
            if let feature {
                let values = result.activations(of: feature)
                context.print(
                    result.joined { token, index in
                        let clean = UntrustedText.sanitized(token)
                        let value = values[index]
                        return value > 0 ? "[\(clean):\(String(format: "%.2f", value))]" : clean
                    })
                return
            }
            for (token, active) in zip(result.tokens, result.features) {
                context.print(
                    UntrustedText.sanitized(token).padded(to: 16)
                        + active.prefix(top).map { "\($0.feature) \(String(format: "%.2f", $0.activation))" }
                        .joined(separator: "   "))
            }
        }
    }
}
