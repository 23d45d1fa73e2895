import ArgumentParser
import LoupeModels

/// Where speculative drafts come from.
enum SpeculationMethod: String, ExpressibleByArgument, CaseIterable {
    /// N-gram drafts from the prompt and the answer so far (``PromptLookup``); no second model.
    case promptLookup = "prompt-lookup"
}

/// `--speculate` and `--draft-tokens`, shared by `generate` and `serve`.
struct SpeculationFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Speculative decoding: prompt-lookup drafts tokens from the prompt and verifies them in one pass "
                + "(the same tokens as without it, but for q8 near-ties).", valueName: "method"))
    var speculate: SpeculationMethod?
    @Option(help: "The most tokens one draft proposes (1–64; with --speculate).") var draftTokens = 10

    /// The options `--speculate` asks for; nil without it.
    func options() throws -> SpeculationOptions? {
        guard speculate != nil else { return nil }
        let options = SpeculationOptions(draftTokens: draftTokens)
        if options.problem != nil { throw ValidationError("--draft-tokens \(draftTokens): use 1 to 64") }
        return options
    }
}

/// What speculation did, as `generate --json` and the bench report it.
struct SpeculationRecord: Encodable {
    var method: String
    var draftTokens: Int
    var drafted: Int
    var accepted: Int
    var acceptanceRate: Double
    /// Forward passes after the prefill.
    var passes: Int

    init(_ counts: SpeculationCounts, options: SpeculationOptions) {
        method = SpeculationMethod.promptLookup.rawValue
        draftTokens = options.draftTokens
        drafted = counts.drafted
        accepted = counts.accepted
        acceptanceRate = counts.acceptanceRate
        passes = counts.passes
    }

    /// "prompt-lookup accepted 45 of 60 drafted tokens (75%) in 30 passes".
    var line: String {
        "\(method) accepted \(accepted) of \(drafted) drafted tokens ("
            + (drafted > 0 ? "\(Int((acceptanceRate * 100).rounded()))%" : "none drafted") + ") in \(passes) passes"
    }
}
