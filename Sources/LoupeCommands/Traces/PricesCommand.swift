import ArgumentParser
import Foundation
import LoupeKit
import LoupeStore

/// `loupe prices list|set|load|remove`: the price table trace costs come from.
struct PricesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prices", abstract: "Model prices (dollars per million tokens) for trace costs.",
        discussion: """
            A call's cost is the source's own when it recorded one, else its tokens at its model's price: \
            the model's own row, or the longest row its name starts with (gpt-4o-mini-2024-07-18 → \
            gpt-4o-mini). A model with no row has no price, shown as such, never as $0. A workspace \
            starts with Loupe's built-in list prices of common hosted models (dated, in `prices list`); \
            its own rows replace them.
            """,
        subcommands: [List.self, Set.self, Load.self, Remove.self])

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "The price table.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            // The workspace's rows and the built-in prices of the models they do not name.
            let prices = PriceTable.effective(try context.traceTables(access: .read).modelPrices())
            if json { return context.print(try Formatting.json(prices)) }
            context.print("$ per 1M tokens                   input   cached   output  source")
            for p in prices {
                let cached = p.cachedInputPerMTok.map { String(format: "%8.3f", $0) } ?? "       —"
                context.print(
                    p.model.padding(toLength: 30, withPad: " ", startingAt: 0)
                        + String(format: " %8.3f ", p.inputPerMTok) + cached
                        + String(format: " %8.3f  ", p.outputPerMTok)
                        + p.source)
            }
            context.print(
                "built-in rows are list prices on \(PriceTable.builtInDate): prices set MODEL or prices load FILE "
                    + "replaces one")
        }
    }

    struct Set: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Set one model's price.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The model (or a prefix of model names).") var model: String
        @Option(help: "Dollars per million input tokens.") var input: Double
        @Option(help: "Dollars per million output tokens.") var output: Double
        @Option(help: "Dollars per million cached input tokens (default: as input).") var cached: Double?
        @Option(help: "Where the price comes from.") var source = "set by hand"

        func run(in context: CommandContext) throws {
            guard input >= 0, output >= 0, (cached ?? 0) >= 0 else { throw CommandFailure("prices cannot be negative") }
            try context.traceTables().setModelPrices([
                ModelPrice(
                    model: model, inputPerMTok: input, outputPerMTok: output, cachedInputPerMTok: cached, source: source
                )
            ])
            context.print("\(model): $\(input) in, $\(output) out per 1M tokens")
        }
    }

    struct Load: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load prices from a CSV file (model,input_per_mtok,output_per_mtok,cached_input_per_mtok,source)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The price file.") var file: String

        func run(in context: CommandContext) throws {
            let prices: [ModelPrice]
            do {
                prices = try PriceTable.parse(CommandFailure.readText(file), file: file)
            } catch let error as PriceFileError {
                throw CommandFailure(error.description)
            }
            try context.traceTables().setModelPrices(prices)
            context.print("loaded \(Formatting.count(prices.count, "price")) from \(file)")
        }
    }

    struct Remove: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a model's price.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The model.") var model: String

        func run(in context: CommandContext) throws {
            guard try context.traceTables().removeModelPrice(model) else {
                if PriceTable.builtIn.contains(where: { $0.model == model }) {
                    throw CommandFailure(
                        "\(model)'s price is built in (a list price on \(PriceTable.builtInDate)): "
                            + "prices set \(model) --input X --output Y replaces it")
                }
                throw CommandFailure("\(model) has no price")
            }
            context.print("removed the price of \(model)")
        }
    }
}
