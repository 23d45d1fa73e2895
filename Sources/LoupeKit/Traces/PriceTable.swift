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
