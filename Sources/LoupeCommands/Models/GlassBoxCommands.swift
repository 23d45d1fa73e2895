import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels

/// `loupe lens TEXT`: the logit lens of the local model at chosen positions, or, with
/// `--attribute`, the direct logit attribution of one token at one position.
struct LensCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "lens",
        abstract: "SmolLM2's logit lens (each layer's prediction) or a token's direct logit attribution.",
        discussion: """
            The text is tokenized as it is (special tokens included) and read teacher-forced. Layer 0 is \
            the token embeddings, layer l + 1 the residual stream leaving layer l, each through the final \
            RMSNorm and the head; the last layer is the model's own prediction. With --attribute TOKEN, the \
            token's logit at --position is split into the embedding's, each layer's attention and \
            feed-forward outputs' and each head's shares (the final norm's scale taken from the actual \
            final stream), which add up to the logit. TOKEN is text that is one token (" Paris") or #ID.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The text (or a generated token: --trace, --span and --token).") var text: String?
    @OptionGroup var selector: TokenSelector
    @Option(help: "A position to read (repeat for more; default the last).") var position: [Int] = []
    @Option(help: "How many of the most likely tokens per cell (1–20).") var top = 5
    @Option(
        help: ArgumentHelp(
            "Attribute this token's logit at --position (text of one token, or #ID).", valueName: "token"))
    var attribute: String?
    @Option(
        help: ArgumentHelp("With --attribute: attribute the logit difference against this token.", valueName: "token"))
    var versus: String?
    @Option(help: "f32: the exact path (checked against the numpy reference); q8: the quantized one.")
    var precision: LlamaPrecision = .f32
    @Flag(help: "Print JSON.") var json = false

    struct Cell: Encodable {
        var layer: Int
        var position: Int
        var top: [GenerationRecord.Alternative]
        var next: GenerationRecord.Alternative?
    }

    struct Record: Encodable {
        var model: String
        var precision: String
        var ids: [Int32]
        var tokens: [String]
        var positions: [Int]
        /// Layer 0 the embeddings, layer l + 1 the stream leaving layer l.
        var cells: [Cell]
    }

    struct TokenName: Encodable {
        var id: Int32
        var text: String
    }

    struct AttributionRecord: Encodable {
        var model: String
        var precision: String
        var ids: [Int32]
        var token: TokenName
        var versus: TokenName?
        var attribution: LogitAttribution
        var total: Float
    }

    func validate() throws {
        if !(1...20).contains(top) { throw ValidationError("--top \(top): use 1 to 20") }
        if attribute == nil, versus != nil { throw ValidationError("--versus goes with --attribute") }
        if attribute != nil, position.count != 1 { throw ValidationError("--attribute needs one --position") }
        try selector.validate(text: text)
    }

    func run(in context: CommandContext) throws {
        guard let text else { return try runToken(in: context) }
        let generator = try context.session.models.smolLM2(precision: precision)
        let tokenizer = generator.tokenizer
        let ids = tokenizer.encode(text, parseSpecial: true)
        guard !ids.isEmpty else { throw CommandFailure("the text has no tokens") }
        let positions = position.isEmpty ? [ids.count - 1] : position
        if let bad = positions.first(where: { !ids.indices.contains($0) }) {
            throw CommandFailure("--position \(bad) is out of range: the text has positions 0…\(ids.count - 1)")
        }
        if let attribute {
            let token = try Self.token(attribute, tokenizer: tokenizer)
            let other = try versus.map { try Self.token($0, tokenizer: tokenizer) }
            let attribution = try generator.model.attribute(ids, token: token, versus: other, position: positions[0])
            return try printAttribution(attribution, ids: ids, tokenizer: tokenizer, in: context)
        }
        let cells = try generator.model.logitLens(ids, positions: positions, top: top)
        func alternative(_ entry: TokenLogprob) -> GenerationRecord.Alternative {
            .init(id: entry.id, text: tokenizer.piece(entry.id), logprob: entry.logprob)
        }
        if json {
            return context.print(
                try Formatting.json(
                    Record(
                        model: ModelLibrary.smolLM2Name, precision: precision.rawValue, ids: ids,
                        tokens: ids.map { tokenizer.piece($0) }, positions: positions,
                        cells: cells.map {
                            Cell(
                                layer: $0.layer, position: $0.position, top: $0.top.map(alternative),
                                next: $0.next.map(alternative))
                        })))
        }
        func shown(_ id: Int32) -> String {
            String(UntrustedText.sanitized(tokenizer.piece(id)).debugDescription.prefix(12))
        }
        context.print(
            "top token and its probability per layer (0 = embeddings) at each position; \(precision.rawValue)")
        context.print("layer " + positions.map { "\($0) \(shown(ids[$0]))".padded(to: 20) }.joined(separator: " "))
        let layers = cells.count / positions.count
        for layer in 0..<layers {
            let row = positions.indices.map { column -> String in
                let cell = cells[column * layers + layer]
                return "\(shown(cell.top[0].id)) \(String(format: "%.2f", Foundation.exp(Double(cell.top[0].logprob))))"
                    .padded(to: 20)
            }
            context.print(String(format: "%5d ", layer) + row.joined(separator: " "))
        }
    }

    private func printAttribution(
        _ attribution: LogitAttribution, ids: [Int32], tokenizer: BPETokenizer, in context: CommandContext
    ) throws {
        func alternative(_ id: Int32) -> TokenName { TokenName(id: id, text: tokenizer.piece(id)) }
        if json {
            return context.print(
                try Formatting.json(
                    AttributionRecord(
                        model: ModelLibrary.smolLM2Name, precision: precision.rawValue, ids: ids,
                        token: alternative(attribution.token), versus: attribution.versus.map(alternative),
                        attribution: attribution, total: attribution.total)))
        }
        let name = UntrustedText.sanitized(tokenizer.piece(attribution.token)).debugDescription
        let against =
            attribution.versus.map {
                " − " + UntrustedText.sanitized(tokenizer.piece($0)).debugDescription
            } ?? ""
        context.print(
            "logit of \(name)\(against) at position \(attribution.position): \(String(format: "%.3f", attribution.logit)); "
                + "parts add up to \(String(format: "%.3f", attribution.total))")
        context.print(String(format: "embedding %8.3f", attribution.embedding))
        context.print("layer  attention  feed-forward  heads 0…\((attribution.heads.first?.count ?? 1) - 1)")
        for layer in attribution.attention.indices {
            let heads = attribution.heads[layer].map { String(format: "%6.2f", $0) }.joined(separator: " ")
            context.print(
                String(
                    format: "%5d  %9.3f  %12.3f  ", layer, attribution.attention[layer], attribution.feedForward[layer])
                    + heads)
        }
    }

    /// `#ID`, or text that the tokenizer reads as exactly one token.
    static func token(_ spelling: String, tokenizer: BPETokenizer) throws -> Int32 {
        if spelling.hasPrefix("#"), let id = Int32(spelling.dropFirst()) { return id }
        let ids = tokenizer.encode(spelling, parseSpecial: true)
        guard ids.count == 1 else {
            throw CommandFailure(
                "\(spelling.debugDescription) is \(ids.count) tokens, not one; give a single token's text or #ID")
        }
        return ids[0]
    }
}

/// `loupe heads`: what each of SmolLM2's 270 query heads does, in numbers.
struct HeadsCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "heads",
        abstract: "SmolLM2's head statistics: entropy, sink mass, previous-token and induction scores.",
        discussion: """
            The induction score is measured as the interpretability literature does: on a sequence of \
            --period random tokens repeated twice (after <|im_start|>), the mean attention from each \
            token of the second copy to the token after its earlier occurrence. Entropy (bits), sink mass \
            (on the first token) and the previous-token score are means over the query rows of TEXT, or \
            of the repeated sequence when no TEXT is given. --ablate-top N also zero-ablates the N best \
            induction heads and N random others on a second repeated sequence and reports the loss on \
            its second copy: the check that the scores found heads that copy.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "A text for entropy, sink mass and previous-token scores (optional).") var text: String?
    @Option(help: "Length of the random sequence that is repeated.") var period = 50
    @Option(help: "Seed of the random sequence.") var seed: UInt64 = 0
    @Option(help: "Rows to print, best first by --sort (all with --json).") var limit = 20
    @Option(help: "Order: induction, previous, sink, entropy.") var sort: Order = .induction
    @Option(help: "Zero-ablate the N best induction heads (and N random ones) and report the loss.")
    var ablateTop: Int?
    @Option(help: "f32: the exact path; q8: the quantized one.") var precision: LlamaPrecision = .f32
    @Flag(help: "Print JSON.") var json = false

    enum Order: String, ExpressibleByArgument, CaseIterable {
        case induction, previous, sink, entropy
    }

    struct Ablation: Encodable {
        var heads: [LlamaHead]
        var randomHeads: [LlamaHead]
        var cleanLoss: Double
        var ablatedLoss: Double
        var randomAblatedLoss: Double
        var seed: UInt64
    }

    struct Record: Encodable {
        var model: String
        var precision: String
        var period: Int
        var seed: UInt64
        var heads: [LlamaHeadStatistics]
        var ablation: Ablation?
    }

    func validate() throws {
        if !(4...1000).contains(period) { throw ValidationError("--period \(period): use 4 to 1000") }
        if let ablateTop, !(1...30).contains(ablateTop) {
            throw ValidationError("--ablate-top \(ablateTop): use 1 to 30")
        }
    }

    func run(in context: CommandContext) throws {
        let generator = try context.session.models.smolLM2(precision: precision)
        let ids = text.map { generator.tokenizer.encode($0, parseSpecial: true) }
        if let ids, ids.count < 2 { throw CommandFailure("the text needs at least two tokens") }
        let model = generator.model
        let statistics = try model.headStatistics(text: ids, sequence: RepeatedSequence(period: period, seed: seed))
        let ablation = try ablateTop.map { try ablate(top: $0, statistics: statistics, model: model) }
        if json {
            return context.print(
                try Formatting.json(
                    Record(
                        model: ModelLibrary.smolLM2Name, precision: precision.rawValue, period: period, seed: seed,
                        heads: statistics, ablation: ablation)))
        }
        let ordered: [LlamaHeadStatistics] =
            switch sort {
            case .induction: statistics.sorted { $0.induction > $1.induction }
            case .previous: statistics.sorted { $0.previousToken > $1.previousToken }
            case .sink: statistics.sorted { $0.sinkMass > $1.sinkMass }
            case .entropy: statistics.sorted { $0.entropy < $1.entropy }
            }
        context.print("head     kv  entropy  sink   prev   induction")
        for entry in ordered.prefix(limit) {
            context.print(
                "L\(entry.layer)H\(entry.head)".padded(to: 8)
                    + String(
                        format: " %2d  %7.3f  %5.3f  %5.3f  %9.3f", entry.keyValueHead, entry.entropy, entry.sinkMass,
                        entry.previousToken, entry.induction))
        }
        if let ablation {
            let names = { (heads: [LlamaHead]) in heads.map { "L\($0.layer)H\($0.head)" }.joined(separator: ",") }
            context.print(
                String(format: "second-copy loss (seed %llu): clean %.3f, ", ablation.seed, ablation.cleanLoss)
                    + String(format: "top %d induction heads ablated %.3f ", ablation.heads.count, ablation.ablatedLoss)
                    + "(\(names(ablation.heads))), "
                    + String(
                        format: "%d random heads ablated %.3f ", ablation.randomHeads.count, ablation.randomAblatedLoss)
                    + "(\(names(ablation.randomHeads)))")
        }
    }

    /// The loss on the second copy of another repeated sequence (seed + 1) clean, with the `top`
    /// best induction heads zeroed, and with as many random other heads zeroed.
    private func ablate(top: Int, statistics: [LlamaHeadStatistics], model: LlamaModel) throws -> Ablation {
        let heads = statistics.sorted { $0.induction > $1.induction }.prefix(top).map {
            LlamaHead(layer: $0.layer, head: $0.head)
        }
        var generator = SplitMix64(seed: seed &+ 7)
        let others = statistics.map { LlamaHead(layer: $0.layer, head: $0.head) }.filter { !heads.contains($0) }
        var random = Set<LlamaHead>()
        while random.count < top { random.insert(others[Int(generator.next() % UInt64(others.count))]) }
        let heldOut = RepeatedSequence(period: period, seed: seed &+ 1)
        return Ablation(
            heads: heads, randomHeads: random.sorted(), cleanLoss: try model.secondHalfLoss(heldOut),
            ablatedLoss: try model.secondHalfLoss(heldOut, ablated: Set(heads)),
            randomAblatedLoss: try model.secondHalfLoss(heldOut, ablated: random), seed: seed &+ 1)
    }
}

/// The models `loupe attention` reads.
enum AttentionModel: String, ExpressibleByArgument, CaseIterable {
    case minilm
    case smollm2
}

extension AttentionCommand {
    struct SmolLM2Record: Encodable {
        var model: String
        var tokens: [String]
        var layer: Int
        var heads: [Int]
        /// The key/value head each of `heads` reads (grouped-query attention).
        var keyValueHeads: [Int]
        /// `[head][query][key]`, zero past each query's own position (causal).
        var attention: [[[Float]]]
    }

    /// `--model smollm2`: one layer's query heads from the float path's probe.
    func runSmolLM2(in context: CommandContext) throws {
        if pair != nil || combine != nil || scores {
            throw CommandFailure("--pair, --combine and --scores are for MiniLM; leave them out with --model smollm2")
        }
        let generator = try context.session.models.smolLM2(precision: .f32)
        let configuration = generator.model.configuration
        guard (0..<configuration.layers).contains(layer) else {
            throw CommandFailure("--layer \(layer) is out of range: SmolLM2 has layers 0…\(configuration.layers - 1)")
        }
        if let head, !(0..<configuration.heads).contains(head) {
            throw CommandFailure("--head \(head) is out of range: SmolLM2 has heads 0…\(configuration.heads - 1)")
        }
        let tokenizer = generator.tokenizer
        let ids = tokenizer.encode(given, parseSpecial: true)
        guard !ids.isEmpty else { throw CommandFailure("the text has no tokens") }
        let probe = try generator.model.probe(ids, LlamaProbeRequest(attentionLayers: [layer]))
        let heads = head.map { [$0] } ?? Array(0..<configuration.heads)
        let matrices = heads.map { h in
            ids.indices.map { q in Array(probe.attentionRow(layer: layer, head: h, query: q)!) }
        }
        let tokens = ids.map { tokenizer.piece($0) }
        if json {
            return context.print(
                try Formatting.json(
                    SmolLM2Record(
                        model: ModelLibrary.smolLM2Name, tokens: tokens, layer: layer, heads: heads,
                        keyValueHeads: heads.map(generator.model.keyValueHead(of:)), attention: matrices)))
        }
        guard heads.count == 1 else {
            throw CommandFailure("give --head H to print a matrix (or --json for every head)")
        }
        Self.printMatrix(
            "SmolLM2 layer \(layer), head \(heads[0]) (reads KV head \(generator.model.keyValueHead(of: heads[0]))): "
                + "row = query token, column = key token",
            tokens: tokens.map { UntrustedText.sanitized($0) }, matrices[0], in: context)
    }
}
