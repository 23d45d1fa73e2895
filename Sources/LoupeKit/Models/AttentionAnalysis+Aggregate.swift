import LoupeTensor

extension AttentionAnalysis {
    /// Which attention the head and head-lines views draw: one head, or one of the views that
    /// combine heads (BertViz's overlaid heads, the model view's mean, attention rollout).
    package enum Aggregate: String, CaseIterable, Hashable, Sendable {
        case head = "one head"
        case layerMean = "mean of the layer's heads"
        case modelMean = "mean of every head"
        case rollout = "rollout"

        /// What the heading calls the weights at `layer`, `head`.
        package func label(layer: Int, head: Int, heads: Int, layers: Int) -> String {
            switch self {
            case .head: "L\(layer) H\(head)"
            case .layerMean: "L\(layer) mean of \(heads) heads"
            case .modelMean: "mean of all \(layers * heads) heads"
            case .rollout: "rollout L0…L\(layer)"
            }
        }

        /// How an export of the weights at `layer`, `head` is named: `L2-H5`, `L2-mean`, `mean`,
        /// `L0-L2-rollout`.
        package func fileStem(layer: Int, head: Int) -> String {
            switch self {
            case .head: "L\(layer)-H\(head)"
            case .layerMean: "L\(layer)-mean"
            case .modelMean: "mean"
            case .rollout: "L0-L\(layer)-rollout"
            }
        }
    }

    /// The weight from `query` to `key` under `aggregate` (the head and layer where they apply).
    package func weight(_ aggregate: Aggregate, layer: Int, head: Int, query: Int, key: Int) -> Float {
        switch aggregate {
        case .head: probability(layer: layer, head: head, query: query, key: key)
        case .layerMean: layerMeans[layer][query * count + key]
        case .modelMean: modelMean[query * count + key]
        case .rollout: rollouts[layer][query * count + key]
        }
    }

    /// The whole `[query][key]` matrix under `aggregate`.
    package func matrix(_ aggregate: Aggregate, layer: Int, head: Int) -> [[Float]] {
        (0..<count).map { q in (0..<count).map { k in weight(aggregate, layer: layer, head: head, query: q, key: k) } }
    }

    /// Whether the neuron view has the query and key vectors it needs.
    package var hasQueryKey: Bool { headSize > 0 && !queries.isEmpty }

    /// One head's query vector for `token` (length ``headSize``), before the 1/√d scale.
    package func queryVector(layer: Int, head: Int, token: Int) -> ArraySlice<Float> {
        let start = (layer * count + token) * heads * headSize + head * headSize
        return queries[start..<(start + headSize)]
    }

    /// One head's key vector for `token` (length ``headSize``).
    package func keyVector(layer: Int, head: Int, token: Int) -> ArraySlice<Float> {
        let start = (layer * count + token) * heads * headSize + head * headSize
        return keys[start..<(start + headSize)]
    }

    /// The attention score q·k/√d from `query` to `key` in one head: what softmax turns into
    /// the probabilities the other views draw.
    package func score(layer: Int, head: Int, query: Int, key: Int) -> Float {
        let q = queryVector(layer: layer, head: head, token: query)
        let k = keyVector(layer: layer, head: head, token: key)
        var dot: Float = 0
        for (a, b) in zip(q, k) { dot += a * b }
        return dot / Float(headSize).squareRoot()
    }

    /// The per-layer head means, the model mean and the rollout of `probabilities`
    /// (`[layer][head][query][key]`, flattened).
    static func aggregates(_ probabilities: [Float], layers: Int, heads: Int, count t: Int) -> (
        layerMeans: [[Float]], modelMean: [Float], rollouts: [[Float]]
    ) {
        let area = t * t
        guard t > 0, heads > 0, layers > 0 else { return ([], [], []) }
        let layerMeans = (0..<layers).map { layer -> [Float] in
            var mean = [Float](repeating: 0, count: area)
            for head in 0..<heads {
                let base = (layer * heads + head) * area
                for i in 0..<area { mean[i] += probabilities[base + i] }
            }
            return mean.map { $0 / Float(heads) }
        }
        var modelMean = [Float](repeating: 0, count: area)
        for mean in layerMeans { for i in 0..<area { modelMean[i] += mean[i] / Float(layers) } }
        var rollouts: [[Float]] = []
        var running: [Float] = []
        for mean in layerMeans {
            // ½A + ½I accounts for the residual connection; rows are renormalised to sum to 1.
            var mixed = mean.map { $0 / 2 }
            for i in 0..<t { mixed[i * t + i] += 0.5 }
            for row in 0..<t {
                let sum = mixed[(row * t)..<((row + 1) * t)].reduce(0, +)
                if sum > 0 { for column in 0..<t { mixed[row * t + column] /= sum } }
            }
            if running.isEmpty {
                running = mixed
            } else {
                var product = [Float](repeating: 0, count: area)
                mixed.withUnsafeBufferPointer { a in
                    running.withUnsafeBufferPointer { b in
                        product.withUnsafeMutableBufferPointer { c in
                            BLAS.sgemm(
                                m: t, n: t, k: t, a: a.baseAddress!, lda: t, b: b.baseAddress!, ldb: t,
                                c: c.baseAddress!, ldc: t)
                        }
                    }
                }
                running = product
            }
            rollouts.append(running)
        }
        return (layerMeans, modelMean, rollouts)
    }
}
