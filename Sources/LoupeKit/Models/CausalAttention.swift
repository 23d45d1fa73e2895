import Foundation
import LoupeModels

/// What the Attention panel asks of SmolLM2: a text, and the layer whose heads to keep.
package struct CausalAttentionRequest: Hashable, Sendable {
    package var text: String
    package var layer: Int

    package init(_ text: String, layer: Int = 0) {
        self.text = text
        self.layer = layer
    }
}

/// SmolLM2's attention on a text, as the Attention panel shows it: every head's statistics
/// (``LlamaModel/headStatistics(text:sequence:)``, the numbers `loupe heads TEXT` prints) and every
/// query row of one layer's 9 heads (``LlamaModel/probe(_:_:)``, the rows `loupe attention --model
/// smollm2 --layer L` prints). Rows of one layer only: every head's full pattern of a 2,000-token
/// text is 4.3 GB, one layer's 144 MB; another layer is read when the panel opens it.
package struct CausalAttention: Hashable, Sendable {
    /// The rows of one layer, every query head: `[head][query][key]`, zero past each query (causal).
    package struct Layer: Hashable, Sendable {
        package var layer: Int
        package var count: Int
        package var rows: [Float]

        /// `layer` of `ids`, read by one probe of the float path.
        package init(_ ids: [Int32], layer: Int, model: LlamaModel) throws(ModelError) {
            let probe = try model.probe(ids, LlamaProbeRequest(attentionLayers: [layer]))
            self.layer = layer
            count = ids.count
            // The probe keeps `[head][query][key]` over every query: the order the panel reads.
            rows = probe.attention[layer] ?? []
        }

        package init(layer: Int, count: Int, rows: [Float]) {
            self.layer = layer
            self.count = count
            self.rows = rows
        }

        /// One head's attention from `query` over every key (zero past `query`).
        package func row(head: Int, query: Int) -> ArraySlice<Float> {
            let start = (head * count + query) * count
            return rows[start..<(start + count)]
        }
    }

    package var text: String
    package var ids: [Int32]
    /// Each position's token as the tokenizer decodes it (byte-level pieces as their text). Raw:
    /// sanitise before it reaches a terminal.
    package var tokens: [String]
    package var layers: Int
    package var heads: Int
    /// The key/value head each query head reads (grouped-query attention: 3 query heads a KV head).
    package var keyValueHeads: [Int]
    /// One head's numbers as `loupe heads` prints them (``LlamaHeadStatistics``), in the Kit's
    /// own type so that the panel reads them without importing the engine.
    package struct HeadStatistics: Hashable, Sendable {
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
        /// Mean probability on the token after the current token's earlier occurrence.
        package var induction: Double

        package init(_ measured: LlamaHeadStatistics) {
            layer = measured.layer
            head = measured.head
            keyValueHead = measured.keyValueHead
            entropy = measured.entropy
            sinkMass = measured.sinkMass
            previousToken = measured.previousToken
            induction = measured.induction
        }
    }

    /// `[layer · heads + head]`, as `loupe heads TEXT --period P --seed S` measures them.
    package var statistics: [HeadStatistics]
    /// The repeated random sequence the induction scores were measured on.
    package var period: Int
    package var seed: UInt64
    /// The layer whose rows are kept.
    package var kept: Layer

    package var count: Int { tokens.count }

    /// `loupe heads`' defaults: 50 random tokens repeated, seed 0.
    package static let period = 50
    package static let seed: UInt64 = 0

    /// Tokenizes `request.text` as the commands do (special tokens parsed), measures every head
    /// and keeps the rows of `request.layer`.
    ///
    /// - Throws: ``ModelError`` for a text of fewer than two tokens (a head statistic needs a row
    ///   that can look back), more tokens than the context, or a layer out of range.
    package init(_ request: CausalAttentionRequest, generator: Generator) throws(ModelError) {
        let model = generator.model
        let configuration = model.configuration
        let ids = generator.tokenizer.encode(request.text, parseSpecial: true)
        guard ids.count >= 2 else {
            throw ModelError(
                file: ModelLibrary.smolLM2File, message: "the text is \(ids.count) token(s): give at least two")
        }
        guard (0..<configuration.layers).contains(request.layer) else {
            throw ModelError(
                file: ModelLibrary.smolLM2File,
                message: "layer \(request.layer) is out of range: SmolLM2 has layers 0…\(configuration.layers - 1)")
        }
        text = request.text
        self.ids = ids
        tokens = ids.map { generator.tokenizer.piece($0) }
        layers = configuration.layers
        heads = configuration.heads
        keyValueHeads = (0..<configuration.heads).map(model.keyValueHead(of:))
        period = Self.period
        seed = Self.seed
        statistics = try model.headStatistics(text: ids, sequence: RepeatedSequence(period: period, seed: seed))
            .map(HeadStatistics.init)
        kept = try Layer(ids, layer: request.layer, model: model)
    }

    /// An analysis built from its parts (tests, fixtures).
    package init(
        text: String, ids: [Int32], tokens: [String], layers: Int, heads: Int, keyValueHeads: [Int],
        statistics: [LlamaHeadStatistics], kept: Layer, period: Int = Self.period, seed: UInt64 = Self.seed
    ) {
        self.text = text
        self.ids = ids
        self.tokens = tokens
        self.layers = layers
        self.heads = heads
        self.keyValueHeads = keyValueHeads
        self.statistics = statistics.map(HeadStatistics.init)
        self.kept = kept
        self.period = period
        self.seed = seed
    }

    /// How many query heads share each key/value head.
    package var groupSize: Int { heads / max(1, Set(keyValueHeads).count) }

    package func statistics(layer: Int, head: Int) -> HeadStatistics { statistics[layer * heads + head] }

    /// The `limit` keys `query` attends to most in `head` of the kept layer, most first (ties by
    /// position); keys past the query are never among them (causal).
    package func top(head: Int, query: Int, limit: Int) -> [(key: Int, probability: Float)] {
        let row = kept.row(head: head, query: query)
        let keys: [Int] = (0...query).sorted { (a: Int, b: Int) -> Bool in
            let (pa, pb) = (row[row.startIndex + a], row[row.startIndex + b])
            return pa != pb ? pa > pb : a < b
        }
        return keys.prefix(limit).map { (key: $0, probability: row[row.startIndex + $0]) }
    }
}

extension AttentionBrowser {
    /// The request's layer alone, for a text already measured.
    package struct LayerRequest: Hashable, Sendable {
        package var ids: [Int32]
        package var layer: Int

        package init(ids: [Int32], layer: Int) {
            self.ids = ids
            self.layer = layer
        }
    }
}
