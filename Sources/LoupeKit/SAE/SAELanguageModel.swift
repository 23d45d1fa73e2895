import Foundation
import LoupeBase
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor

/// The language model's loss with an SAE's reconstruction spliced into its residual stream,
/// against the clean model and the stream zeroed at that layer (SAELens's `ce_loss_score`):
/// how much of what the model uses there the SAE keeps.
package struct LanguageModelFidelity: Codable, Hashable, Sendable {
    /// Next-token predictions scored (positions 1 … n−2 of each sequence: those the splice reaches).
    package var tokens: Int
    package var sequences: Int
    /// True when no scored chunk was one the SAE's activations came from.
    package var heldOut: Bool
    /// Mean next-token cross-entropy (nats) of the clean model.
    package var cleanLoss: Double
    /// With the SAE's reconstruction in place of the stream after its layer.
    package var splicedLoss: Double
    /// With the stream after its layer set to zero.
    package var zeroAblatedLoss: Double

    /// (zero − spliced) / (zero − clean): 1 when the SAE loses nothing the model uses, 0 when it
    /// is as bad as no stream at all.
    package var lossRecovered: Double {
        zeroAblatedLoss != cleanLoss ? (zeroAblatedLoss - splicedLoss) / (zeroAblatedLoss - cleanLoss) : .nan
    }
}

extension SAEService {
    /// The model name activation sets of SmolLM2's residual stream are stored under.
    package static var languageModelName: String { ModelLibrary.smolLM2Name }

    /// Runs SmolLM2 (q8, the weights generation uses) over the workspace's chunks in order, as
    /// raw text without the chat template, each cut to its first `maxSequence` tokens, and keeps
    /// the residual stream after `layer` for every token but the first (the attention sink, whose
    /// stream is far larger than the rest), until `tokens` rows. Shards and token places are
    /// stored as ``collect(layer:tokens:reporter:)`` stores MiniLM's.
    package func collectLanguageModel(
        layer: Int, tokens limit: Int, maxSequence: Int = 256, reporter: JobReporter = .detached()
    ) throws -> Collected {
        let generator = try models.smolLM2()
        let configuration = generator.model.configuration
        guard (0..<configuration.layers).contains(layer) else {
            throw SAEError("--layer \(layer): SmolLM2 has layers 0…\(configuration.layers - 1)")
        }
        guard limit > 0 else { throw SAEError("--tokens must be at least 1") }
        let chunks = try CorpusTables(database).chunks()
        guard !chunks.isEmpty else { throw SAEError("the workspace has no chunks: run loupe ingest FILE first") }
        let width = configuration.width
        let tables = SAETables(database)
        let set = try tables.createActivationSet(
            model: Self.languageModelName, layer: layer, dimensions: width, plannedRows: limit)
        var writer = ShardWriter(set: set, dimensions: width, tables: tables)
        var watch = Stopwatch()
        let captured = LlamaResidualCapture()
        let model = try generator.model.hooked(captured.hook(layer: layer))
        var used = 0
        var index = 0
        let batchSize = 8
        collecting: while index < chunks.count {
            try reporter.checkCancellation()
            let group = chunks[index..<min(chunks.count, index + batchSize)]
            index += group.count
            let batch = group.map { (chunk: $0, ids: Array(generator.tokenizer.encode($0.text).prefix(maxSequence))) }
                .filter { $0.ids.count >= 2 }
            guard !batch.isEmpty else { continue }
            var caches = try batch.map { try model.makeCache(context: $0.ids.count) }
            _ = try model.forward(batch.map { $0.ids }, caches: &caches, logits: .last)
            guard let stream = captured.value else { continue }
            var row = 0
            for (chunk, ids) in batch {
                defer { row += ids.count }
                used += 1
                for position in 1..<ids.count {
                    let base = (row + position) * width
                    try writer.append(
                        stream.storage[base..<(base + width)], chunk: chunk.id, position: position,
                        token: generator.tokenizer.piece(ids[position]), limit: limit)
                    if writer.rows >= limit { break collecting }
                }
            }
            reporter.report(
                JobProgress(
                    completed: Double(writer.rows), total: Double(limit),
                    detail: "SmolLM2 layer \(layer): \(writer.rows)/\(limit) tokens from \(used) chunks"))
        }
        try writer.finish()
        return Collected(set: set, rows: writer.rows, chunks: used, seconds: watch.lap())
    }

    /// ``LanguageModelFidelity`` of `sae` (trained on activation set `set`, after `layer`) over
    /// about `tokens` next-token predictions: chunks the set did not read, from the corpus's end,
    /// each cut to `maxSequence` tokens.
    package func languageModelFidelity(
        _ sae: SparseAutoencoder, layer: Int, set: Int64, tokens budget: Int = 2048, maxSequence: Int = 128
    ) throws -> LanguageModelFidelity {
        let generator = try models.smolLM2()
        let used = try SAETables(database).activationChunkIDs(set: set)
        let chunks = try CorpusTables(database).chunks()
        var picked = chunks.reversed().filter { !used.contains($0.id) }
        let heldOut = !picked.isEmpty
        if picked.isEmpty { picked = Array(chunks.reversed()) }
        var sequences: [[Int32]] = []
        var scored = 0
        for chunk in picked where scored < budget {
            let ids = Array(generator.tokenizer.encode(chunk.text).prefix(maxSequence))
            guard ids.count >= 3 else { continue }
            sequences.append(ids)
            scored += ids.count - 2
        }
        guard !sequences.isEmpty else { throw SAEError("the workspace has no chunk of 3 tokens or more to score") }
        let intervention = SAEIntervention(sae: sae, layer: layer)
        func loss(_ model: LlamaModel) throws -> Double {
            var total = 0.0
            for ids in sequences {
                let logits = try model.logits(for: ids)
                total += Self.crossEntropy(logits, ids: ids, from: intervention.firstPosition)
            }
            return total / Double(scored)
        }
        let plain = generator.model
        return LanguageModelFidelity(
            tokens: scored, sequences: sequences.count, heldOut: heldOut, cleanLoss: try loss(plain),
            splicedLoss: try loss(try plain.hooked(intervention.splicing())),
            zeroAblatedLoss: try loss(try plain.hooked(intervention.zeroing())))
    }

    /// Σ −log p(ids[t+1]) over rows t = `first` … n−2 of `logits` `[n, vocabulary]`.
    static func crossEntropy(_ logits: Tensor, ids: [Int32], from first: Int) -> Double {
        var total = 0.0
        for t in first..<(ids.count - 1) {
            let row = logits.row(t)
            let logSumExp = row.withUnsafeBufferPointer { Sampler.logSoftmaxSummary($0, top: 0).logSumExp }
            total -= Double(row[row.startIndex + Int(ids[t + 1])] - logSumExp)
        }
        return total
    }
}

/// Appends float16 rows and their token places to an activation set in shards of
/// ``SAEService/shardRows``, the last one completing the set.
struct ShardWriter {
    let set: Int64
    let dimensions: Int
    let tables: SAETables
    private(set) var rows = 0
    private var shard = 0
    private var buffer: [Float16] = []
    private var places: [SAETokenRecord] = []
    private var completed = false

    init(set: Int64, dimensions: Int, tables: SAETables) {
        self.set = set
        self.dimensions = dimensions
        self.tables = tables
        buffer.reserveCapacity(SAEService.shardRows * dimensions)
    }

    mutating func append(_ values: ArraySlice<Float>, chunk: Int64, position: Int, token: String, limit: Int) throws {
        for value in values { buffer.append(Float16(value)) }
        places.append(SAETokenRecord(row: rows, chunkID: chunk, position: position, token: token))
        rows += 1
        if places.count == SAEService.shardRows { try flush(completing: rows >= limit) }
    }

    private mutating func flush(completing: Bool) throws {
        guard !places.isEmpty else { return }
        let data = buffer.withUnsafeBufferPointer { Data(buffer: $0) }
        try tables.appendActivationShard(
            set: set, shard: shard, firstRow: rows - places.count, data: data, tokens: places, completing: completing)
        completed = completing
        shard += 1
        buffer.removeAll(keepingCapacity: true)
        places.removeAll(keepingCapacity: true)
    }

    /// Stores what is left and marks the set complete.
    mutating func finish() throws {
        try flush(completing: true)
        if !completed { try tables.completeActivationSet(set) }
    }
}

extension SAETextActivations {
    /// SAE `id` on `text`, through the model whose stream it reads (MiniLM or SmolLM2).
    package init(text: String, model id: Int64, database: any SQLDatabase, models: ModelLibrary) throws {
        let (record, trainer) = try SAEService(database: database, models: models).stored(id)
        let source = try SAETables(database).activationSets().first { $0.id == record.setID }?.model
        if source == SAEService.languageModelName {
            try self.init(text: text, sae: trainer.sae, layer: record.layer, generator: try models.smolLM2())
        } else {
            try self.init(text: text, sae: trainer.sae, layer: record.layer, embedder: try models.miniLM())
        }
    }

    /// `sae` on the residual stream after `layer` of SmolLM2's pass over `text` (raw, no chat
    /// template); the first token, which the SAE never reads, has no features.
    package init(text: String, sae: SparseAutoencoder, layer: Int, generator: Generator) throws {
        let ids = generator.tokenizer.encode(text, parseSpecial: true)
        guard !ids.isEmpty else { throw SAEError("the text has no tokens") }
        try self.init(ids: ids, sae: sae, layer: layer, generator: generator)
    }

    /// `sae` on SmolLM2's stream after `layer` over the token ids `ids` (a trace step's context).
    package init(ids: [Int32], sae: SparseAutoencoder, layer: Int, generator: Generator) throws {
        let captured = LlamaResidualCapture()
        _ = try generator.model.hooked(captured.hook(layer: layer)).logits(for: ids)
        guard let stream = captured.value else { throw SAEError("the text has no tokens") }
        let intervention = SAEIntervention(sae: sae, layer: layer)
        var features = [[FeatureActivation]](repeating: [], count: ids.count)
        if case (let rows, let f)? = intervention.encode(stream, positions: Array(0..<ids.count)) {
            for (index, row) in rows.enumerated() {
                features[row] = (0..<sae.width).compactMap { j in
                    let code = f.codes[index * sae.width + j]
                    return code > 0 ? FeatureActivation(feature: j, activation: code) : nil
                }.sorted { $0.activation > $1.activation }
            }
        }
        self.tokens = ids.map { generator.tokenizer.piece($0) }
        self.features = features
        self.piecesCarrySpaces = true
    }
}
