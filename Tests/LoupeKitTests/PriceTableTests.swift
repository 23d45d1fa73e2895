import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@Suite struct PriceTableTests {
    let table = PriceTable([
        ModelPrice(model: "gpt-4o", inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25, source: "t"),
        ModelPrice(model: "gpt-4o-mini", inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: nil, source: "t"),
    ])

    @Test func theLongestMatchingNameWinsAndProvidersAreDropped() {
        #expect(table.price(for: "gpt-4o-mini-2024-07-18")?.model == "gpt-4o-mini")
        #expect(table.price(for: "openai/gpt-4o-2024-08-06")?.model == "gpt-4o")
        #expect(table.price(for: "llama-3.1-8b-instruct") == nil)
        #expect(table.price(for: nil) == nil)
    }

    @Test func cachedInputIsBilledAtItsOwnRate() throws {
        // 1000 input of which 400 cached, 100 output, on gpt-4o: 600·2.5 + 400·1.25 + 100·10 per 1e6.
        let cost = try #require(table.cost(model: "gpt-4o", input: 1000, output: 100, cachedInput: 400))
        #expect(abs(cost - (600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6) < 1e-15)
        // No cached rate: cached tokens are billed as input.
        let mini = try #require(table.cost(model: "gpt-4o-mini", input: 1000, output: 0, cachedInput: 400))
        #expect(abs(mini - 1000 * 0.15 / 1e6) < 1e-15)
        #expect(table.cost(model: "unknown", input: 10, output: 10, cachedInput: nil) == nil)
        #expect(table.cost(model: "gpt-4o", input: nil, output: nil, cachedInput: nil) == nil)
    }

    /// A workspace's own rows win over the built-in prices by name; the built-in rows fill in the
    /// rest, each dated, and agree with the sample price file where both list a model.
    @Test func builtInPricesFillInWhatTheWorkspaceDoesNotName() throws {
        let own = ModelPrice(
            model: "gpt-4o", inputPerMTok: 1, outputPerMTok: 2, cachedInputPerMTok: nil, source: "mine")
        let table = PriceTable(workspace: [own])
        #expect(table.price(for: "gpt-4o-2024-08-06") == own)
        #expect(table.price(for: "gpt-4o-mini-2024-07-18")?.source.hasPrefix("built-in: OpenAI list price on ") == true)
        #expect(table.price(for: "claude-sonnet-4-20250514")?.inputPerMTok == 3)
        #expect(table.price(for: "llama-3.1-8b-instruct") == nil)
        #expect(PriceTable.effective([own]).filter { $0.model == "gpt-4o" } == [own])
        #expect(PriceTable(workspace: []).prices.count == PriceTable.builtIn.count)
        for price in PriceTable.builtIn {
            #expect(price.source.contains(PriceTable.builtInDate), "\(price.model)")
            #expect(price.inputPerMTok > 0 && price.outputPerMTok >= price.inputPerMTok, "\(price.model)")
            #expect((price.cachedInputPerMTok ?? 0) < price.inputPerMTok, "\(price.model)")
        }
        let file = #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/sample-data/prices.csv"
        let sample = try PriceTable.parse(try String(contentsOfFile: "/" + file, encoding: .utf8), file: file)
        #expect(sample.count >= 6)
        for price in sample {
            let builtIn = try #require(PriceTable.builtIn.first { $0.model == price.model }, "\(price.model)")
            #expect(
                builtIn.inputPerMTok == price.inputPerMTok && builtIn.outputPerMTok == price.outputPerMTok
                    && builtIn.cachedInputPerMTok == price.cachedInputPerMTok, "\(price.model)")
        }
    }

    @Test func priceFilesNameTheirBadLine() throws {
        let prices = try PriceTable.parse(
            "# comment\nmodel,input_per_mtok,output_per_mtok,cached_input_per_mtok,source\na,1,2,,here\nb,3,4,0.5,there\n",
            file: "p.csv")
        #expect(
            prices.map(\.model) == ["a", "b"] && prices[0].cachedInputPerMTok == nil && prices[1].source == "there")
        let noHeader = #expect(throws: PriceFileError.self) { try PriceTable.parse("a,1,2\n", file: "p.csv") }
        #expect(
            noHeader?.description
                == "p.csv:1: expected the header model,input_per_mtok,output_per_mtok,cached_input_per_mtok,source")
        let negative = #expect(throws: PriceFileError.self) {
            try PriceTable.parse("model,i,o\na,-1,2\n", file: "p.csv")
        }
        #expect(negative?.description == "p.csv:2: expected model,input,output[,cached,source] with prices ≥ 0")
        #expect(negative?.location == LoupeBase.SourceLocation(file: "p.csv", line: 2))
    }
}
