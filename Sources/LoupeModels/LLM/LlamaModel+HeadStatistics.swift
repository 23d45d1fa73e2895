import Foundation
import LoupeBase
import LoupeTensor

/// What one query head does, in numbers: means over query rows 1…T−1 (row 0 can only attend to
/// itself).
package struct LlamaHeadStatistics: Sendable, Codable, Hashable {
    package var layer: Int
    package var head: Int
    /// The key/value head it reads (grouped-query attention).
    package var keyValueHead: Int
    /// Mean row entropy, in bits.
    package var entropy: Double
    /// Mean probability on the first token (an attention sink).
    package var sinkMass: Double
    /// Mean probability on the previous token.
    package var previousToken: Double
    /// Mean probability, on the second copy of a repeated random sequence, on the token after the
    /// current token's earlier occurrence (Olsson et al. 2022; TransformerLens's induction score).
    package var induction: Double

    /// A head's numbers as given (here, a view's test, a fixture).
    package init(
        layer: Int, head: Int, keyValueHead: Int, entropy: Double, sinkMass: Double, previousToken: Double,
        induction: Double
    ) {
        self.layer = layer
        self.head = head
        self.keyValueHead = keyValueHead
        self.entropy = entropy
        self.sinkMass = sinkMass
        self.previousToken = previousToken
        self.induction = induction
    }
}

/// A sequence of random tokens repeated twice after a prefix: the literature's test for
/// induction heads, which nothing but copying can predict on its second half.
package struct RepeatedSequence: Sendable, Equatable {
    /// `prefix + r + r`.
    package var ids: [Int32]
    package var prefixLength: Int
    /// The length of `r`.
    package var period: Int

    /// `period` tokens drawn uniformly from ids 1000..<40000 of SmolLM2's vocabulary (ordinary
    /// words and word pieces: no control tokens, no bytes) by SplitMix64 from `seed`, repeated.
    package init(period: Int, seed: UInt64, prefix: [Int32] = [Self.beginning]) {
        var generator = SplitMix64(seed: seed)
        let random = (0..<period).map { _ in Int32(1000 + Int(generator.next() % 39_000)) }
        ids = prefix + random + random
        prefixLength = prefix.count
        self.period = period
    }

    /// `<|im_start|>` (id 1), which opens every SmolLM2 chat turn: a first token the model has seen
    /// first in training, so its sink heads behave as they do on real prompts.
    package static let beginning: Int32 = 1

    /// Positions on the second copy whose next token copying predicts: each row's logits predict
    /// the next token, and the first row of the copy's own next token is already predictable.
    package var secondHalfPredictions: Range<Int> { (prefixLength + period)..<(ids.count - 1) }
}

extension LlamaModel {
    /// Entropy, sink mass and previous-token score of every head on `ids` (the repeated sequence
    /// itself when nil), and induction scores on `sequence`.
    ///
    /// The text's attention is probed a few layers at a time, as many as fit in
    /// ``statisticsBudget`` bytes (every head's T × T rows of one layer), so a context of
    /// thousands of tokens is measured in bounded memory; a short text is one pass.
    package func headStatistics(
        text ids: [Int32]? = nil, sequence: RepeatedSequence
    ) throws(ModelError) -> [LlamaHeadStatistics] {
        let allLayers = Set(0..<configuration.layers)
        let repeated = try probe(sequence.ids, LlamaProbeRequest(attentionLayers: allLayers))
        let t = ids?.count ?? repeated.tokens.count
        let layerBytes = max(1, configuration.heads * t * t * MemoryLayout<Float>.size)
        let group = max(1, min(configuration.layers, Self.statisticsBudget / layerBytes))
        let n = sequence.period
        let second = (sequence.prefixLength + n)..<sequence.ids.count
        var statistics: [LlamaHeadStatistics] = []
        for first in stride(from: 0, to: configuration.layers, by: group) {
            let layers = first..<min(configuration.layers, first + group)
            let general =
                try ids.map { ids throws(ModelError) in
                    try probe(ids, LlamaProbeRequest(attentionLayers: Set(layers)))
                } ?? repeated
            for layer in layers {
                for head in 0..<configuration.heads {
                    var (entropy, sink, previous) = (0.0, 0.0, 0.0)
                    for query in 1..<max(t, 1) {
                        guard let row = general.attentionRow(layer: layer, head: head, query: query) else { continue }
                        let p = Array(row)
                        for key in 0...query where p[key] > 0 { entropy -= Double(p[key]) * log2(Double(p[key])) }
                        sink += Double(p[0])
                        previous += Double(p[query - 1])
                    }
                    var induction = 0.0
                    for query in second {
                        let row = repeated.attentionRow(layer: layer, head: head, query: query)!
                        induction += Double(row[row.startIndex + query - n + 1])
                    }
                    let rows = Double(max(t - 1, 1))
                    statistics.append(
                        LlamaHeadStatistics(
                            layer: layer, head: head, keyValueHead: keyValueHead(of: head), entropy: entropy / rows,
                            sinkMass: sink / rows, previousToken: previous / rows,
                            induction: induction / Double(max(second.count, 1))))
                }
            }
        }
        return statistics
    }

    /// The most memory the text's attention rows may take at once in ``headStatistics(text:sequence:)``:
    /// 512 MiB, every layer of a 700-token text in one pass, a layer a pass past about 2,700 tokens.
    package static let statisticsBudget = 512 << 20

    /// The mean next-token loss (nats) over the second copy of `sequence` with `ablated` heads
    /// zeroed: what induction heads lower and ablating them raises.
    package func secondHalfLoss(_ sequence: RepeatedSequence, ablated: Set<LlamaHead> = []) throws(ModelError)
        -> Double
    {
        let result = try probe(sequence.ids, LlamaProbeRequest(ablated: ablated, logits: true))
        let logits = result.logits!
        var loss = 0.0
        let rows = sequence.secondHalfPredictions
        for position in rows {
            let row = logits.row(position)
            let summary = row.withUnsafeBufferPointer { Sampler.logSoftmaxSummary($0, top: 0) }
            loss -= Double(row[row.startIndex + Int(sequence.ids[position + 1])] - summary.logSumExp)
        }
        return loss / Double(max(rows.count, 1))
    }
}
