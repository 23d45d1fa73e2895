import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore

extension SAECommand {
    /// `loupe sae steer SAE FEATURE PROMPT…`: the SAE panel's `s` on a feature card, as a command.
    struct Steer: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer a prompt with SmolLM2 steered by an SAE feature, beside the plain answer.",
            discussion: """
                Adds --alpha times the feature's decoder direction to the residual stream after the \
                SAE's layer at every position (α in the feature's activation units, those its card \
                shows), or with --ablate removes the feature's own contribution wherever it fires. Both \
                answers are greedy by default; the log-probabilities are each answer's tokens read by \
                the plain and the steered model. The same as loupe generate --steer FEATURE:α --sae ID.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The SAE's id (one trained with --model smollm2).") var id: Int64
        @Argument(help: "The feature.") var feature: Int
        @Option(help: "How much of the feature's direction to add (its activation units).") var alpha: Float = 8
        @Flag(help: "Remove the feature's contribution instead of steering with it.") var ablate = false
        @Option(help: "The most tokens to generate.") var maxTokens = 48
        @Flag(help: "Print JSON.") var json = false
        @Argument(parsing: .remaining, help: "The prompt (the rest of the line).") var prompt: [String] = []

        func run(in context: CommandContext) throws {
            let text = prompt.joined(separator: " ").trimmingWhitespace()
            guard !text.isEmpty else { throw CommandFailure("give a prompt after the feature and options") }
            var request = SAESteering.Request(sae: id, prompt: text)
            if ablate {
                request.ablations = [feature]
            } else {
                request.steers = [SAESteering.Steer(feature: feature, alpha: alpha)]
            }
            request.options.maxTokens = maxTokens
            let result = try SAECommand.plainly {
                try SAESteering(database: try context.database(access: .read), models: context.session.models).run(
                    request, isCancelled: { context.reporter.isCancelled })
            }
            if json { return context.print(try Formatting.json(result)) }
            SAECommand.printSteering(result, context)
        }
    }

    /// The answers with and without, and how the intervention moved each answer's log-probability.
    static func printSteering(_ result: SAESteering.Result, _ context: CommandContext) {
        func named(_ feature: Int) -> String {
            "feature \(feature)" + (result.labels[String(feature)].map { " (\(UntrustedText.sanitized($0)))" } ?? "")
        }
        let what =
            result.steers.map { "steer " + named($0.feature) + " × " + String(format: "%g", $0.alpha) }
            + result.ablations.map { "ablate " + named($0) }
        context.print("SAE \(result.sae), SmolLM2 layer \(result.layer): " + what.joined(separator: ", "))
        context.print("without: " + terminalSafe(result.plain.text))
        context.print("with:    " + terminalSafe(result.steered.text))
        context.print("log-probabilities, each answer read by the plain → the steered model:")
        for (name, answer) in [("without", result.plain), ("with", result.steered)] {
            let moved = answer.tokens.filter { abs($0.delta) >= 0.005 }.sorted { abs($0.delta) > abs($1.delta) }
                .prefix(5).map {
                    UntrustedText.sanitized($0.text).debugDescription + String(format: " %+.2f", $0.delta)
                }
            context.print(
                "  \(name.padded(to: 8)) Σ "
                    + String(
                        format: "%.2f → %.2f (%+.2f) over %d tokens", answer.plainLogprob, answer.steeredLogprob,
                        answer.steeredLogprob - answer.plainLogprob, answer.tokens.count)
                    + (moved.isEmpty ? "; no token moved" : "; most moved: " + moved.joined(separator: ", ")))
        }
    }
}

extension SAECommand {
    /// `loupe sae at --trace ID --span N --token I`: the Traces token view's `x`, as a command.
    struct At: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "The SmolLM2 SAE features active where a local model's step chose one of its tokens.",
            discussion: """
                SmolLM2 reads the step's own context (its recorded prompt and the tokens it generated \
                before that one) and the SAE encodes the residual stream after its layer at the last \
                position, the one whose prediction was the token (q8, as the step ran).
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("A trace with a local model's step.", valueName: "id")) var trace: Int64
        @Option(help: ArgumentHelp("The step's span ordinal (loupe trace tokens lists them).", valueName: "n"))
        var span: Int
        @Option(help: ArgumentHelp("The generated token's index, from 0.", valueName: "index")) var token: Int
        @Option(help: "The SAE (default: the newest finished SmolLM2 SAE).") var sae: Int64?
        @Option(help: "Features listed.") var top = 12
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let found = try SAECommand.plainly {
                try SAEBrowser(database: try context.database(access: .read), models: context.session.models)
                    .tokenFeatures(trace: trace, span: span, token: token, sae: sae)
            }
            if json { return context.print(try Formatting.json(found)) }
            context.print(
                "trace \(found.trace) span \(found.span) token #\(found.token) "
                    + UntrustedText.sanitized(found.chosen).debugDescription
                    + ", chosen at position \(found.position): SAE \(found.sae) (SmolLM2 layer \(found.layer)), "
                    + "\(found.features.count) features active")
            if let unreadable = found.maximaUnreadable { context.print("⚠ " + UntrustedText.sanitized(unreadable)) }
            for feature in found.features.prefix(top) {
                let peak = feature.maxActivation.map { String(format: "  (its max %.2f)", $0) } ?? ""
                context.print(
                    String(format: "  feature %5d  %6.2f", feature.feature, feature.activation) + peak
                        + (feature.label.map { "  " + UntrustedText.sanitized($0) } ?? ""))
            }
        }
    }
}
