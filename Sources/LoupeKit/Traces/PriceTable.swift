import Foundation
import LoupeBase
import LoupeStore

/// What a model call cost, from the workspace's price table. A model matches its own row, or
/// the longest row its name starts with once a provider prefix is dropped
/// ("openai/gpt-4o-mini-2024-07-18" → "gpt-4o-mini"). No row: no price — never $0.
package struct PriceTable: Hashable, Sendable {
    package var prices: [ModelPrice]

    package init(_ prices: [ModelPrice]) {
        // Longest names first, so the most specific prefix wins.
        self.prices = prices.sorted {
            $0.model.count != $1.model.count ? $0.model.count > $1.model.count : $0.model < $1.model
        }
    }

    /// The prices a workspace's calls are costed at: its own rows, then Loupe's built-in list
    /// for the models it has no row for (as Langfuse ships its maintained model prices beside
    /// the user's). `prices set` or `prices load` replaces a built-in price by name.
    package init(workspace rows: [ModelPrice]) {
        self.init(Self.effective(rows))
    }

    /// `rows`, then the built-in prices of the models `rows` does not name.
    package static func effective(_ rows: [ModelPrice]) -> [ModelPrice] {
        let named = Set(rows.map(\.model))
        return rows + builtIn.filter { !named.contains($0.model) }
    }

    /// The day the built-in prices were the providers' list prices.
    package static let builtInDate = "2025-06-01"

    /// Common hosted models' list prices (standard tier, dollars per million tokens) on
    /// ``builtInDate``, so a new workspace costs the calls of the models most agents use. Prices
    /// change: each row says where and when it was read, and the workspace's own row wins.
    package static let builtIn: [ModelPrice] = {
        let openAI = "built-in: OpenAI list price on \(builtInDate) (standard tier)"
        let anthropic = "built-in: Anthropic list price on \(builtInDate) (cache reads)"
        let rows: [(String, Double, Double, Double, String)] = [
            ("gpt-4o-mini", 0.15, 0.60, 0.075, openAI),
            ("gpt-4o", 2.50, 10.00, 1.25, openAI),
            ("gpt-4.1", 2.00, 8.00, 0.50, openAI),
            ("gpt-4.1-mini", 0.40, 1.60, 0.10, openAI),
            ("gpt-4.1-nano", 0.10, 0.40, 0.025, openAI),
            ("o4-mini", 1.10, 4.40, 0.275, openAI),
            ("claude-3-5-haiku", 0.80, 4.00, 0.08, anthropic),
            ("claude-3-7-sonnet", 3.00, 15.00, 0.30, anthropic),
            ("claude-sonnet-4", 3.00, 15.00, 0.30, anthropic),
            ("claude-opus-4", 15.00, 75.00, 1.50, anthropic),
        ]
        return rows.map {
            ModelPrice(model: $0.0, inputPerMTok: $0.1, outputPerMTok: $0.2, cachedInputPerMTok: $0.3, source: $0.4)
        }
    }()

    package func price(for model: String?) -> ModelPrice? {
        guard let model, !model.isEmpty else { return nil }
        let bare = model.split(separator: "/").last.map(String.init) ?? model
        for candidate in [model, bare] {
            if let exact = prices.first(where: { $0.model == candidate }) { return exact }
        }
        return prices.first { bare.hasPrefix($0.model) || model.hasPrefix($0.model) }
    }

    /// Dollars for one call; nil when the model has no price or the call no token counts.
    package func cost(model: String?, input: Int?, output: Int?, cachedInput: Int?) -> Double? {
        guard let price = price(for: model), input != nil || output != nil else { return nil }
        // Token counts come from imported files: a negative one counts as none, so the
        // subtraction below cannot overflow.
        let input = max(0, input ?? 0)
        let cached = min(max(0, cachedInput ?? 0), input)
        let fresh = input - cached
        let cachedRate = price.cachedInputPerMTok ?? price.inputPerMTok
        return
            (Double(fresh) * price.inputPerMTok + Double(cached) * cachedRate + Double(max(0, output ?? 0))
            * price.outputPerMTok)
            / 1e6
    }

    /// Parses a price file: CSV with a header `model,input_per_mtok,output_per_mtok,
    /// cached_input_per_mtok,source` (cached may be empty); `#` lines are comments.
    package static func parse(_ text: String, file: String) throws -> [ModelPrice] {
        var prices: [ModelPrice] = []
        var sawHeader = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: ",", maxSplits: 4, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if !sawHeader {
                guard fields.first == "model" else {
                    throw PriceFileError(
                        file: file, line: index + 1,
                        "expected the header model,input_per_mtok,output_per_mtok,cached_input_per_mtok,source")
                }
                sawHeader = true
                continue
            }
            guard fields.count >= 3, !fields[0].isEmpty, let input = Double(fields[1]), let output = Double(fields[2]),
                input >= 0, output >= 0, input.isFinite, output.isFinite
            else {
                throw PriceFileError(
                    file: file, line: index + 1, "expected model,input,output[,cached,source] with prices ≥ 0")
            }
            let cached = fields.count > 3 && !fields[3].isEmpty ? Double(fields[3]) : nil
            if fields.count > 3 && !fields[3].isEmpty && !(cached.map { $0 >= 0 && $0.isFinite } ?? false) {
                throw PriceFileError(
                    file: file, line: index + 1, "cached_input_per_mtok \"\(fields[3])\" is not a price ≥ 0")
            }
            prices.append(
                ModelPrice(
                    model: fields[0], inputPerMTok: input, outputPerMTok: output, cachedInputPerMTok: cached,
                    source: fields.count > 4 ? fields[4] : file))
        }
        return prices
    }
}

/// A price file that cannot be loaded, with the line to fix.
package struct PriceFileError: UserFacingError, Hashable, Sendable {
    /// The price file and the 1-based line at fault.
    package var location: SourceLocation
    package var message: String

    package init(at location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }

    package init(file: String, line: Int, _ message: String) {
        self.init(at: SourceLocation(file: file, line: line), message)
    }

    /// `file:line: message`.
    package var description: String { "\(location): \(message)" }
}
