import Foundation
import LoupeModels
import LoupeTensor

/// Everything the Attention panel shows for one text: every head's attention probabilities,
/// per-head statistics, and the embedding lens.
package struct AttentionAnalysis: Hashable, Sendable {
    /// What one head does, in numbers (means over query rows).
    package struct HeadStatistics: Hashable, Sendable {
        package var layer: Int
        package var head: Int
        /// Mean row entropy, in bits: low for focused heads, high for diffuse ones.
        package var entropy: Double
        package var classifierMass: Double
        package var separatorMass: Double
        package var punctuationMass: Double
        /// Mean probability on the previous token (query i → key i−1).
        package var previousToken: Double
        /// Mean probability on the next token (query i → key i+1).
        package var nextToken: Double
    }

    package var text: String
    /// For a sentence pair: the index of the second sentence's first token.
    package var secondStart: Int?
    package var tokens: [String]
    package var layers: Int
    package var heads: Int
    /// `[layer][head][query][key]`, flattened.
    package var probabilities: [Float]
    package var statistics: [HeadStatistics]
    /// Cosine between each layer's mean-pooled hidden states and the final sentence embedding.
    package var lens: [Double]
    /// Every head max-pooled to at most `thumbnailSize × thumbnailSize`, `[layer·heads + head]`,
    /// so the model grid draws 72 heads without reading 72 full matrices each frame.
    package var thumbnails: [[[Float]]]
    package static let thumbnailSize = 16
    /// Each layer's attention averaged over its heads, `[layer][query·T + key]`.
    package private(set) var layerMeans: [[Float]]
    /// Every head of every layer averaged, `[query·T + key]`.
    package private(set) var modelMean: [Float]
    /// Attention rollout (Abnar & Zuidema, 2020) through each layer, `[layer][query·T + key]`:
    /// the product of the layers' head-averaged attention with the residual path added
    /// (½A + ½I, rows renormalised), from the first layer up to this one.
    package private(set) var rollouts: [[Float]]
    /// Width of one head's query and key vectors (32 in MiniLM-L6: 384 wide, 12 heads); 0 when none were kept.
    package var headSize: Int
    /// The query and key projections before the 1/√d scale, `[layer][token][hidden]` flattened,
    /// for the neuron view; empty when the analysis was built without them.
    package var queries: [Float]
    package var keys: [Float]

    package var count: Int { tokens.count }

    /// Probability that `query` attends to `key` in one head.
    package func probability(layer: Int, head: Int, query: Int, key: Int) -> Float {
        probabilities[((layer * heads + head) * count + query) * count + key]
    }

    /// One head's matrix as rows (query) of columns (key).
    package func matrix(layer: Int, head: Int) -> [[Float]] { matrix(.head, layer: layer, head: head) }

    /// An analysis from its data; the head statistics are computed from `probabilities`
    /// (`[layer][head][query][key]`, flattened).
    package init(
        text: String, tokens: [String], layers: Int, heads: Int, probabilities: [Float], lens: [Double],
        secondStart: Int? = nil, headSize: Int = 0, queries: [Float] = [], keys: [Float] = []
    ) {
        precondition(
            probabilities.count == layers * heads * tokens.count * tokens.count, "probabilities do not match the shape")
        precondition(
            queries.count == keys.count && queries.count == layers * tokens.count * heads * headSize,
            "queries and keys do not match the shape")
        self.headSize = headSize
        self.queries = queries
        self.keys = keys
        self.text = text
        self.secondStart = secondStart
        self.tokens = tokens
        self.layers = layers
        self.heads = heads
        self.probabilities = probabilities
        self.lens = lens
        statistics = []
        thumbnails = []
        (layerMeans, modelMean, rollouts) = Self.aggregates(
            probabilities, layers: layers, heads: heads, count: tokens.count)
        statistics = (0..<layers).flatMap { layer in (0..<heads).map { head in statistics(layer: layer, head: head) } }
        thumbnails = (0..<layers).flatMap { layer in (0..<heads).map { head in pooled(layer: layer, head: head) } }
    }

    /// One head's matrix max-pooled to `min(T, thumbnailSize)` square: a sharp pattern stays
    /// visible however small it is drawn.
    private func pooled(layer: Int, head: Int) -> [[Float]] {
        let t = count
        let size = min(t, AttentionAnalysis.thumbnailSize)
        return (0..<size).map { row in
            (0..<size).map { column in
                var best: Float = 0
                for q in (row * t / size)..<max(row * t / size + 1, (row + 1) * t / size) {
                    for k in (column * t / size)..<max(column * t / size + 1, (column + 1) * t / size) {
                        best = max(best, probability(layer: layer, head: head, query: q, key: k))
                    }
                }
                return best
            }
        }
    }

    /// Runs MiniLM once on `text` (or the pair `text`, `second`), keeping every layer's
    /// attention and residual stream.
    package init(text: String, second: String? = nil, embedder: SentenceEmbedder) {
        let configuration = embedder.encoder.configuration
        let ids: [Int32]
        let types: [Int32]
        if let second {
            (ids, types) = embedder.tokenizer.encodePair(text, second)
        } else {
            ids = embedder.tokenizer.encode(text)
            types = Array(repeating: 0, count: ids.count)
        }
        let everyLayer = Set(0..<configuration.layers)
        let (hidden, captured) = embedder.encoder.forward(
            [ids], types: [types],
            capture: CaptureRequest(attentionLayers: everyLayer, residualLayers: everyLayer, queryKeyLayers: everyLayer)
        )
        let final = SentenceEmbedder.meanPool(hidden, lengths: [ids.count])[0]
        let lens = (0..<configuration.layers).map { layer -> Double in
            guard let states = captured.residual[layer]?.first else { return 0 }
            let pooled = SentenceEmbedder.meanPool(
                states.reshaped([1, ids.count, configuration.hiddenSize]), lengths: [ids.count])[0]
            return Double(SentenceEmbedder.cosine(pooled, final))
        }
        self.init(
            text: second.map { text + " ‖ " + $0 } ?? text, tokens: embedder.tokenizer.tokens(ids),
            layers: configuration.layers,
            heads: configuration.heads,
            probabilities: (0..<configuration.layers).flatMap { captured.attention[$0]?.first?.storage ?? [] },
            lens: lens,
            secondStart: second == nil ? nil : types.firstIndex(of: 1),
            headSize: configuration.headSize,
            queries: (0..<configuration.layers).flatMap { captured.queries[$0]?.first?.storage ?? [] },
            keys: (0..<configuration.layers).flatMap { captured.keys[$0]?.first?.storage ?? [] }
        )
    }

    private func statistics(layer: Int, head: Int) -> HeadStatistics {
        let t = count
        let punctuation = tokens.map { token in
            !token.isEmpty && token.unicodeScalars.allSatisfy { $0.properties.generalCategory.isPunctuation }
        }
        var entropy = 0.0
        var classifier = 0.0
        var separator = 0.0
        var punctuationMass = 0.0
        var previous = 0.0
        var next = 0.0
        for q in 0..<t {
            for k in 0..<t {
                let p = Double(probability(layer: layer, head: head, query: q, key: k))
                if p > 0 { entropy -= p * Foundation.log2(p) }
                if punctuation[k] { punctuationMass += p }
            }
            classifier += Double(probability(layer: layer, head: head, query: q, key: 0))
            separator += Double(probability(layer: layer, head: head, query: q, key: t - 1))
            if q > 0 { previous += Double(probability(layer: layer, head: head, query: q, key: q - 1)) }
            if q < t - 1 { next += Double(probability(layer: layer, head: head, query: q, key: q + 1)) }
        }
        let rows = Double(max(1, t))
        let pairs = Double(max(1, t - 1))
        return HeadStatistics(
            layer: layer, head: head, entropy: entropy / rows, classifierMass: classifier / rows,
            separatorMass: separator / rows,
            punctuationMass: punctuationMass / rows, previousToken: previous / pairs, nextToken: next / pairs
        )
    }

    /// One head as JSON: the tokens, the site, its statistics and `attention[query][key]`.
    package func json(layer: Int, head: Int) -> String {
        struct Export: Encodable {
            var text: String
            var tokens: [String]
            var layer: Int
            var head: Int
            var secondSentenceStart: Int?
            var entropyBits: Double
            var previousToken: Double
            var attention: [[Float]]
        }
        let statistics = self.statistics[layer * heads + head]
        let export = Export(
            text: text, tokens: tokens, layer: layer, head: head, secondSentenceStart: secondStart,
            entropyBits: statistics.entropy, previousToken: statistics.previousToken,
            attention: matrix(layer: layer, head: head))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        // A non-finite statistic is written as a string, so encoding cannot fail (it threw, and
        // the export was `{}`).
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return ((try? encoder.encode(export)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }

    /// One head's matrix as CSV: a header of key tokens, then a row per query token.
    package func csv(layer: Int, head: Int) -> String { csv(matrix(layer: layer, head: head)) }

    /// A `[query][key]` matrix over this text's tokens as CSV: a header of key tokens, then a row
    /// per query token.
    package func csv(_ matrix: [[Float]]) -> String {
        func field(_ text: String) -> String {
            text.contains(where: { $0 == "," || $0 == "\"" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        // A token that occurs more than once is named with its position (`the@3`), so every
        // column has its own name (pandas would rename repeats `the.1`, `the.2`).
        var counts: [String: Int] = [:]
        for token in tokens { counts[token, default: 0] += 1 }
        let names = tokens.enumerated().map { index, token in (counts[token] ?? 0) > 1 ? "\(token)@\(index)" : token }
        var lines = ["query\\key," + names.map(field).joined(separator: ",")]
        for (q, row) in matrix.enumerated() {
            lines.append(field(names[q]) + "," + row.map { String(format: "%.6f", $0) }.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isPunctuation: Bool {
        switch self {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation:
            return true
        default:
            return false
        }
    }
}
