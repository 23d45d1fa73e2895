import Foundation
import LoupeBase
import LoupeModels
import LoupeTensor
import Testing

/// SmolLM2's insides (the probe, the logit lens, direct logit attribution, head statistics and
/// ablation) on the float path, against the numpy reference's own capture
/// (`scripts/reference/smollm2_reference.py`, request "probe") on text no other test reads.
///
/// Needs the model (`scripts/fetch-smollm2`) and the peers' Python (`scripts/python-peers`).
@Suite(.serialized)
struct LlamaProbeTests {
    /// Held-out texts: a tool-calling turn and prose, neither used by the forward-pass tests.
    static let heldOut: [String] = [
        "<|im_start|>user\nWhat's the weather in Lisbon tomorrow?<|im_end|>\n<|im_start|>assistant\n"
            + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lisbon\", \"day\": \"tomorrow\"}}\n"
            + "</tool_call><|im_end|>\n",
        "The lighthouse keeper climbed the spiral stairs every evening at dusk. He wound the clockwork, "
            + "trimmed the wick, and watched the beam sweep across the black water until the ships had passed. "
            + "In forty years he had missed only one night, the winter his daughter was born, and even then "
            + "he had asked the baker's son to keep the light burning.",
    ]
    static let layers = [0, 7, 15, 29]

    /// Every query head's attention probabilities in four layers within 1e-4 of the reference's,
    /// and the logit lens (embeddings and each layer's stream through the final norm and head) at
    /// three positions within 2e-4: the reference's top 5 ids' log-probabilities and the next
    /// token's. (The reference multiplies with numpy's OpenBLAS; Loupe's float products sum in
    /// their own fixed order, `f32product.c`, and float32's rounding of two orders differs by
    /// about 1e-4 here.)
    @Test func attentionAndLensMatchTheReference() throws {
        let model = try SmolLM2.model()
        let lensPositions = [0, 17, 47]
        let reply = try SmolLM2.reference([
            "texts": Self.heldOut, "positions": 48,
            "probe": ["attention_layers": Self.layers, "lens_positions": lensPositions, "top": 5],
        ])
        let prompts = try #require(reply["prompts"] as? [[Int]]).map { $0.map(Int32.init) }
        let probes = try #require(reply["probe"] as? [[String: Any]])
        var (attentionWorst, lensWorst, cellsCompared) = (Float(0), Float(0), 0)
        for (ids, expected) in zip(prompts, probes) {
            #expect(ids.count == 48)
            let probe = try model.probe(
                ids, LlamaProbeRequest(attentionLayers: Set(Self.layers), positions: lensPositions))
            let attention = try #require(expected["attention"] as? [String: [[[Double]]]])
            for layer in Self.layers {
                let heads = try #require(attention[String(layer)])
                #expect(heads.count == 9)
                for (head, rows) in heads.enumerated() {
                    for (query, row) in rows.enumerated() {
                        let mine = try #require(probe.attentionRow(layer: layer, head: head, query: query))
                        for (a, b) in zip(mine, row) { attentionWorst = max(attentionWorst, abs(a - Float(b))) }
                    }
                }
            }
            let cells = model.logitLens(of: probe, top: 40)
            let lens = try #require(expected["lens"] as? [[[String: Any]]]).flatMap { $0 }
            #expect(cells.count == lens.count && cells.count == 3 * 31)
            for (cell, reference) in zip(cells, lens) {
                #expect(cell.layer == reference["layer"] as? Int && cell.position == reference["position"] as? Int)
                let top = try #require(reference["top"] as? [[Double]])
                #expect(Int(cell.top[0].id) == Int(top[0][0]) || abs(top[0][1] - top[1][1]) < 1e-3)
                for entry in top {
                    let mine = try #require(cell.top.first { Int($0.id) == Int(entry[0]) }, "id \(entry[0])")
                    lensWorst = max(lensWorst, abs(mine.logprob - Float(entry[1])))
                }
                if let next = reference["next"] as? Double {
                    lensWorst = max(lensWorst, abs(try #require(cell.next).logprob - Float(next)))
                }
                cellsCompared += 1
            }
        }
        print("SmolLM2 probe vs numpy: attention max |Δp| \(attentionWorst), lens max |Δ log p| \(lensWorst)")
        #expect(cellsCompared == 2 * 3 * 31)
        #expect(attentionWorst <= 1e-4, "attention max |Δp| \(attentionWorst)")
        #expect(lensWorst <= 2e-4, "lens max |Δ log p| \(lensWorst)")
    }

    /// With nothing ablated the probe's logits are the forward pass's, and the lens's last row
    /// (the stream leaving the last layer) is the model's own prediction.
    @Test func theProbeIsTheForwardPass() throws {
        let model = try SmolLM2.model()
        let ids = LlamaForwardTests.france
        let probe = try model.probe(ids, LlamaProbeRequest(positions: [ids.count - 1], logits: true))
        let forward = try model.logits(for: ids)
        let logits = try #require(probe.logits)
        let worst = SmolLM2.maxDifference(logits, rows: 0..<ids.count, forward, from: 0)
        #expect(worst <= 1e-4, "max |Δlogit| probe vs forward \(worst)")
        #expect(
            probe.residuals.count == 31 && probe.attentionOutputs.count == 30 && probe.feedForwardOutputs.count == 30)
        let last = model.logitLens(of: probe, top: 1).last!
        #expect(last.layer == 30 && last.top[0].id == LlamaForwardTests.franceAnswer[0])
        // Grouped-query attention: query heads 0–2 read KV head 0, 3–5 head 1, 6–8 head 2, as
        // llama.cpp groups GGUF's heads (the brief's test vector, matched above, depends on it).
        #expect((0..<9).map(model.keyValueHead(of:)) == [0, 0, 0, 1, 1, 1, 2, 2, 2])
    }

    /// The embedding's, every attention and feed-forward output's and every head's attributions
    /// add up to the logit (and to the logit difference against another token), and each layer's
    /// heads add up to its attention output's.
    @Test func attributionsAddUpToTheLogit() throws {
        let model = try SmolLM2.model()
        let ids = LlamaForwardTests.france
        let position = ids.count - 1
        for versus: Int32? in [nil, 60] {
            let attribution = try model.attribute(ids, token: 504, versus: versus, position: position)
            #expect(attribution.attention.count == 30 && attribution.heads.count == 30)
            let gap = abs(attribution.total - attribution.logit)
            #expect(gap <= 1e-3 * max(1, abs(attribution.logit)), "parts \(attribution.total) vs \(attribution.logit)")
            var headGap: Float = 0
            for layer in 0..<30 {
                headGap = max(headGap, abs(attribution.heads[layer].reduce(0, +) - attribution.attention[layer]))
            }
            #expect(headGap <= 1e-3, "heads vs their layer: \(headGap)")
            print(
                "DLA of 504 \(versus.map { "− \($0)" } ?? ""): logit \(attribution.logit), parts \(attribution.total)")
        }
        // The logit difference is the difference of the two logits.
        let alone = try model.attribute(ids, token: 504, position: position)
        let other = try model.attribute(ids, token: 60, position: position)
        let difference = try model.attribute(ids, token: 504, versus: 60, position: position)
        #expect(abs(difference.logit - (alone.logit - other.logit)) <= 1e-4)
    }

    /// The heads the induction score ranks first, found on one repeated random sequence, are
    /// induction heads on another: zero-ablating the top three raises the loss on its second copy
    /// more than ablating any of five random sets of three other heads.
    @Test func ablatingTheTopInductionHeadsHurtsCopying() throws {
        let model = try SmolLM2.model()
        let statistics = try model.headStatistics(sequence: RepeatedSequence(period: 40, seed: 1))
        #expect(statistics.count == 270)
        let ranked = statistics.sorted { $0.induction > $1.induction }
        let top = Set(ranked.prefix(3).map { LlamaHead(layer: $0.layer, head: $0.head) })
        let heldOut = RepeatedSequence(period: 40, seed: 2)
        let clean = try model.secondHalfLoss(heldOut)
        let ablated = try model.secondHalfLoss(heldOut, ablated: top)
        var generator = SplitMix64(seed: 7)
        var randomRises: [Double] = []
        let others = statistics.map { LlamaHead(layer: $0.layer, head: $0.head) }.filter { !top.contains($0) }
        for _ in 0..<5 {
            var chosen = Set<LlamaHead>()
            while chosen.count < 3 { chosen.insert(others[Int(generator.next() % UInt64(others.count))]) }
            randomRises.append(try model.secondHalfLoss(heldOut, ablated: chosen) - clean)
        }
        let first = ranked[0]
        print(
            "induction: top \(ranked.prefix(3).map { "L\($0.layer)H\($0.head) \(String(format: "%.2f", $0.induction))" }); "
                + "second-copy loss clean \(clean), top-3 ablated \(ablated), random rises \(randomRises)")
        #expect(first.induction > 0.3, "the best induction score is \(first.induction)")
        // Without copying, a token drawn from 39,000 ids costs ln 39,000 ≈ 10.6 nats.
        #expect(clean < 0.6 * log(39_000), "the model copies the second half: loss \(clean)")
        #expect(ablated - clean > (randomRises.max() ?? 0), "top rise \(ablated - clean), random \(randomRises)")
        // The statistics are probabilities and entropies in range.
        for entry in statistics {
            #expect((0...1).contains(entry.sinkMass) && (0...1).contains(entry.previousToken))
            #expect(entry.entropy >= 0 && entry.entropy <= log2(81))
        }
    }

    /// A layer, position or head out of range and an empty text are errors that say so.
    @Test func badRequestsAreClearErrors() throws {
        let model = try SmolLM2.model()
        let ids: [Int32] = [1, 2, 3]
        func message(_ request: LlamaProbeRequest, ids: [Int32] = [1, 2, 3]) -> String {
            do {
                _ = try model.probe(ids, request)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(message(LlamaProbeRequest(attentionLayers: [30])).contains("layer 30 is out of range"))
        #expect(message(LlamaProbeRequest(positions: [3])).contains("position 3 is out of range"))
        #expect(message(LlamaProbeRequest(ablated: [LlamaHead(layer: 0, head: 9)])).contains("no head 9 in layer 0"))
        #expect(message(LlamaProbeRequest(), ids: []).contains("at least one token"))
        #expect(throws: ModelError.self) { try model.attribute(ids, token: 49152, position: 0) }
    }
}
