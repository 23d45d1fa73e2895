import Foundation
import LoupeBase
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor
import Synchronization

/// Sparse autoencoders on MiniLM's residual stream: collect a layer's activations over the
/// workspace's chunks (float16 shards with each token's place), train an SAE on them with
/// checkpoints in the workspace, and measure it.
package struct SAEService: Sendable {
    /// The workspace's tables, a SQLite file or PostgreSQL.
    package let database: any SQLDatabase
    let models: ModelLibrary
    private var tables: SAETables { SAETables(database) }

    package init(database: any SQLDatabase, models: ModelLibrary) {
        self.database = database
        self.models = models
    }

    package init(workspace: Workspace, models: ModelLibrary) {
        self.init(database: workspace, models: models)
    }

    package static let shardRows = 4096

    // MARK: - Collecting

    package struct Collected: Hashable, Sendable {
        package var set: Int64
        package var rows: Int
        package var chunks: Int
        package var seconds: Double
    }

    /// Runs MiniLM over the chunks (in order) and keeps the residual stream after `layer` for
    /// every real token but [CLS] and [SEP], until `tokens` rows. Shards are written as they fill.
    package func collect(layer: Int, tokens limit: Int, reporter: JobReporter = .detached()) throws -> Collected {
        let embedder = try models.miniLM()
        let layers = embedder.encoder.configuration.layers
        guard (0..<layers).contains(layer) else {
            throw SAEError("--layer \(layer): MiniLM has layers 0…\(layers - 1)")
        }
        guard limit > 0 else { throw SAEError("--tokens must be at least 1") }
        let chunks = try CorpusTables(database).chunks()
        guard !chunks.isEmpty else { throw SAEError("the workspace has no chunks: run loupe ingest FILE first") }
        let hidden = embedder.encoder.configuration.hiddenSize
        let set = try tables.createActivationSet(
            model: ModelLibrary.miniLMName, layer: layer, dimensions: hidden, plannedRows: limit)
        var watch = Stopwatch()
        var buffer: [Float16] = []
        buffer.reserveCapacity(Self.shardRows * hidden)
        var places: [SAETokenRecord] = []
        var rows = 0
        var shard = 0
        var used = 0
        var completed = false
        func flush(completing: Bool) throws {
            guard !places.isEmpty else { return }
            let data = buffer.withUnsafeBufferPointer { Data(buffer: $0) }
            try tables.appendActivationShard(
                set: set, shard: shard, firstRow: rows - places.count, data: data, tokens: places,
                completing: completing)
            completed = completing
            shard += 1
            buffer.removeAll(keepingCapacity: true)
            places.removeAll(keepingCapacity: true)
        }
        // Batches of 16 chunks, one per core at a time with single-threaded BLAS (as embedding
        // does); their rows are appended in chunk order.
        let batchSize = 16
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var index = 0
        let threads = BLAS.threads
        BLAS.threads = 1
        defer { BLAS.threads = threads }
        collecting: while index < chunks.count {
            try reporter.checkCancellation()
            let group = Array(chunks[index..<min(chunks.count, index + batchSize * cores)])
            index += group.count
            let batches = stride(from: 0, to: group.count, by: batchSize).map {
                Array(group[$0..<min(group.count, $0 + batchSize)])
            }
            let encoded = batches.map { $0.map { embedder.tokenizer.encode($0.text) } }
            let results = Mutex([[Tensor]?](repeating: nil, count: batches.count))
            DispatchQueue.concurrentPerform(iterations: batches.count) { b in
                let (_, captured) = embedder.encoder.forward(
                    encoded[b], capture: CaptureRequest(residualLayers: [layer]))
                results.withLock { $0[b] = captured.residual[layer] ?? [] }
            }
            let states = results.withLock { $0 }
            for (b, batch) in batches.enumerated() {
                let ids = encoded[b]
                for (sequence, states) in (states[b] ?? []).enumerated() {
                    used += 1
                    let pieces = embedder.tokenizer.tokens(ids[sequence])
                    for position in 1..<max(1, ids[sequence].count - 1) {
                        let base = position * hidden
                        for d in 0..<hidden { buffer.append(Float16(states.storage[base + d])) }
                        places.append(
                            SAETokenRecord(
                                row: rows, chunkID: batch[sequence].id, position: position, token: pieces[position]))
                        rows += 1
                        if places.count == Self.shardRows { try flush(completing: rows >= limit) }
                        if rows >= limit { break collecting }
                    }
                }
            }
            reporter.report(
                JobProgress(
                    completed: Double(rows), total: Double(limit),
                    detail: "layer \(layer): \(rows)/\(limit) tokens from \(used) chunks"))
        }
        // The set is complete in the transaction of its last rows; a kill before leaves it partial.
        try flush(completing: true)
        if !completed { try tables.completeActivationSet(set) }
        return Collected(set: set, rows: rows, chunks: used, seconds: watch.lap())
    }

    /// A stored SAE and its trainer (settings and state) as its last checkpoint left them.
    package func stored(_ id: Int64) throws -> (record: SAEModelRecord, trainer: SAETrainer) {
        guard let record = try tables.saeModel(id) else { throw SAEError("there is no SAE \(id)") }
        let settings = try Self.settings(from: record.settingsJSON, sae: id)
        return (record, try SAETrainer(serialized: record.state, settings: settings.trainer))
    }

    /// A set's rows as float32, row-major.
    package func activations(set: Int64) throws -> (rows: Int, dimensions: Int, values: [Float]) {
        guard let info = try tables.activationSets().first(where: { $0.id == set }) else {
            throw SAEError("there is no activation set \(set): loupe sae collect")
        }
        let values = try Self.activationRows(
            0..<info.rows, set: set, dimensions: info.dimensions, tables: tables)
        return (info.rows, info.dimensions, values)
    }

    /// Rows `range` of activation set `set` (rows of `dimensions` values) as float32, row-major,
    /// read from the float16 shards that hold them: the whole set to train, a few hundred rows for
    /// a feature card.
    static func activationRows(_ range: Range<Int>, set: Int64, dimensions: Int, tables: SAETables) throws
        -> [Float]
    {
        var values = [Float](repeating: 0, count: range.count * dimensions)
        let bytesPerRow = dimensions * MemoryLayout<Float16>.size
        for part in try tables.activationRowBytes(set: set, rows: range, bytesPerRow: bytesPerRow) {
            part.data.withUnsafeBytes { raw in
                let halves = raw.bindMemory(to: Float16.self)
                for row in part.firstRow..<(part.firstRow + halves.count / dimensions) {
                    let source = (row - part.firstRow) * dimensions
                    let target = (row - range.lowerBound) * dimensions
                    for d in 0..<dimensions { values[target + d] = Float(halves[source + d]) }
                }
            }
        }
        return values
    }

    // MARK: - Training

    package struct TrainOptions: Hashable, Sendable {
        package var width = 3072
        /// TopK's k, or nil for ReLU + L1.
        package var k: Int? = 32
        package var l1: Float = 5
        package var steps = 2000
        package var batch = 1024
        package var learningRate: Float = 4e-4
        package var seed: UInt64 = 0x5AE
        package var checkpointEvery = 200
        package var logEvery = 10

        package init() {}

        /// What is wrong with these settings, named by the option that sets each (`loupe sae
        /// train`'s and `:sae train`'s): thrown before anything is stored. An SAE of no latents
        /// stopped the process on a precondition, and a batch of none stored a NaN loss into a
        /// NOT NULL column.
        func check() throws(SAEError) {
            guard width >= 1 else { throw SAEError("--width must be at least 1 latent, got \(width)") }
            if let k, !(1...width).contains(k) {
                throw SAEError("--k must be between 1 and the width (\(width)), got \(k)")
            }
            guard steps >= 1 else { throw SAEError("--steps must be at least 1, got \(steps)") }
            guard batch >= 1 else { throw SAEError("--batch must be at least 1 token, got \(batch)") }
            guard learningRate.isFinite, learningRate > 0 else {
                throw SAEError("--lr must be a positive number, got \(learningRate)")
            }
            guard k != nil || (l1.isFinite && l1 >= 0) else {
                throw SAEError("--l1 must be a number of at least 0, got \(l1)")
            }
        }
    }

    package struct Trained: Sendable {
        package var model: Int64
        package var step: Int
        package var metrics: SAEMetrics?
        package var tokensPerSecond: Double
        package var resumed: Bool
        /// The activation set it trained on.
        package var set: Int64
    }

    /// Trains a new SAE on `set`, or resumes model `resume` from its last checkpoint. Without a
    /// set, the newest complete one of `layer` (and of `source`, a model name, when given).
    /// `fidelityTokens` is how many next-token predictions a SmolLM2 SAE's fidelity scores.
    package func train(
        set: Int64?, layer: Int?, source: String? = nil, options: TrainOptions, resume: Int64? = nil,
        fidelityTokens: Int = 2048, reporter: JobReporter = .detached(),
        onStep: @Sendable (SAETrainer.StepMetrics) -> Void = { _ in }
    ) throws -> Trained {
        if resume == nil { try options.check() }
        // Training allocates tens of MB of temporaries per step: kept in the heap, not mapped afresh.
        Memory.keepLargeAllocationsInTheHeap()
        var trainer: SAETrainer
        let model: Int64
        let setID: Int64
        if let resume {
            let (record, loaded) = try stored(resume)
            trainer = loaded
            model = resume
            setID = record.setID
        } else {
            let sets = try tables.activationSets().filter { source == nil || $0.model == source }
            if let set, let partial = sets.first(where: { $0.id == set && !$0.complete }) {
                throw SAEError(
                    "activation set \(set) is partial (\(partial.rows) of \(partial.plannedRows ?? partial.rows) rows; "
                        + "its collection was stopped): run loupe sae collect again, or choose a complete set")
            }
            // Only complete sets: a collection that was killed leaves a partial one behind.
            guard
                let chosen = set.flatMap({ id in sets.first { $0.id == id } })
                    ?? sets.last(where: { $0.complete && (layer == nil || $0.layer == layer) })
            else {
                let partial = sets.contains { !$0.complete && (layer == nil || $0.layer == layer) }
                throw SAEError(
                    "no \(partial ? "complete " : "")\(source.map { "\($0) " } ?? "")activations for layer "
                        + "\(layer.map(String.init) ?? "any"): run loupe sae collect"
                        + (source == Self.languageModelName ? " --model smollm2" : "")
                        + (layer.map { " --layer \($0)" } ?? "") + " first")
            }
            setID = chosen.id
            let (rows, dimensions, values) = try activations(set: chosen.id)
            guard rows >= options.batch else {
                throw SAEError("set \(chosen.id) has \(rows) rows, fewer than one batch of \(options.batch)")
            }
            var settings = SAETrainer.Settings()
            settings.learningRate = options.learningRate
            settings.steps = options.steps
            settings.warmupSteps = min(options.steps / 10, 200)
            settings.deadAfterTokens = max(options.batch * 50, min(rows, 1_000_000))
            var sae = SparseAutoencoder(
                inputs: dimensions, width: options.width,
                activation: options.k.map { .topK(k: $0, auxK: min(512, options.width / 2), auxCoefficient: 1 / 32) }
                    ?? .relu(l1: options.l1),
                seed: options.seed)
            // Inputs scaled so their mean norm is √d (SAELens's normalize_activations), and the
            // pre-encoder bias started at the data's mean.
            var normSum = 0.0
            var mean = [Double](repeating: 0, count: dimensions)
            for r in 0..<rows {
                var norm: Float = 0
                for d in 0..<dimensions {
                    let value = values[r * dimensions + d]
                    norm += value * value
                    mean[d] += Double(value)
                }
                normSum += Double(norm.squareRoot())
            }
            sae.inputScale = Float(Double(dimensions).squareRoot() / max(normSum / Double(rows), 1e-12))
            sae.decoderBias = mean.map { Float($0 / Double(rows)) * sae.inputScale }
            trainer = SAETrainer(sae: sae, settings: settings)
            let stored = StoredSettings(trainer: settings, options: options)
            model = try tables.createSAEModel(
                set: chosen.id, layer: chosen.layer, width: options.width, settingsJSON: try stored.json(),
                state: trainer.serialized())
        }
        // One trainer per SAE: a second `sae train --resume` of it is refused and says who trains it.
        if let held = try LeaseTables(database).claimLease(kind: JobLease.Kind.saeModel, targetID: model) {
            throw SAEError(
                "SAE \(model) is being trained in \(held.holderDescription); wait for it to finish, "
                    + "or stop it and run loupe sae train --resume \(model) again")
        }
        let heartbeat = LeaseHeartbeat.start(database: database, kind: JobLease.Kind.saeModel, targetID: model)
        defer { heartbeat.stop() }
        let (rows, dimensions, values) = try activations(set: setID)
        let stored = try Self.settings(from: try tables.saeModelHeader(model)!.settingsJSON, sae: model)
        let batchSize = stored.options.batch
        let resumed = resume != nil
        var log: [SAELogRow] = []
        var watch = Stopwatch()
        var trained = 0
        var batch = [Float](repeating: 0, count: batchSize * dimensions)
        let scale = trainer.sae.inputScale
        while trainer.step < trainer.settings.steps {
            if reporter.isCancelled { break }
            // Batches are a function of the step: a resumed run sees the same ones.
            var generator = SplitMix64(seed: stored.options.seed &+ UInt64(trainer.step) &* 0x9E37_79B9)
            for r in 0..<batchSize {
                let source = Int(generator.next() % UInt64(rows))
                for d in 0..<dimensions { batch[r * dimensions + d] = values[source * dimensions + d] * scale }
            }
            let metrics = trainer.train(batch, rows: batchSize)
            trained += batchSize
            onStep(metrics)
            if metrics.step % stored.options.logEvery == 0 || metrics.step == trainer.settings.steps {
                log.append(
                    SAELogRow(
                        step: metrics.step, loss: Double(metrics.loss.total), mse: Double(metrics.loss.reconstruction),
                        l0: Double(metrics.l0), fvu: Double(metrics.fvu), dead: Double(metrics.deadFraction),
                        dense: Double(metrics.denseFraction), learningRate: Double(metrics.learningRate)))
                reporter.report(
                    JobProgress(
                        completed: Double(metrics.step), total: Double(trainer.settings.steps),
                        detail: String(
                            format: "SAE %lld step %d/%d · loss %.4g · L0 %.1f · FVU %.3f · dead %.1f%%", model,
                            metrics.step, trainer.settings.steps, metrics.loss.total, metrics.l0, metrics.fvu,
                            metrics.deadFraction * 100),
                        values: SAETrainingPoint(model: model, log: log.last!).values))
            }
            if metrics.step % stored.options.checkpointEvery == 0 {
                try tables.checkpointSAE(
                    model, step: trainer.step, state: trainer.serialized(), metricsJSON: nil, log: log)
                log = []
            }
        }
        let seconds = watch.lap()
        var metrics: SAEMetrics?
        if trainer.step >= trainer.settings.steps {
            metrics = SAEMetrics.measure(trainer.sae, values: values, rows: rows, dimensions: dimensions)
            let setRecord = try tables.activationSets().first { $0.id == setID }
            let layerOfSet = setRecord?.layer ?? 0
            if setRecord?.model == Self.languageModelName {
                metrics?.languageModelFidelity = try languageModelFidelity(
                    trainer.sae, layer: layerOfSet, set: setID, tokens: fidelityTokens)
            } else {
                metrics?.embeddingFidelity = try fidelity(trainer.sae, layer: layerOfSet)
            }
        }
        try tables.checkpointSAE(
            model, step: trainer.step, state: trainer.serialized(), metricsJSON: try metrics.map { try $0.json() },
            log: log)
        if metrics != nil, !reporter.isCancelled {
            // The feature browser's index, built once here rather than on the panel's first visit
            // (which builds it instead when this is stopped or fails: it is a cache, and the SAE
            // is already saved).
            _ = try? SAEFeatureIndex(model: model, database: database, reporter: reporter)
        }
        return Trained(
            model: model, step: trainer.step, metrics: metrics,
            tokensPerSecond: seconds > 0 ? Double(trained) / seconds : 0, resumed: resumed, set: setID)
    }

    /// Embedding fidelity: the mean cosine between MiniLM's sentence embedding of a chunk with the
    /// SAE's reconstruction spliced in after `layer` (every token but [CLS] and [SEP], as trained)
    /// and the clean embedding, over up to `limit` chunks spread over the corpus.
    package func fidelity(_ sae: SparseAutoencoder, layer: Int, limit: Int = 64) throws -> Double {
        let embedder = try models.miniLM()
        let chunks = try CorpusTables(database).chunks()
        guard !chunks.isEmpty else { return .nan }
        let step = max(1, chunks.count / limit)
        let picked = stride(from: 0, to: chunks.count, by: step).prefix(limit).map { chunks[$0] }
        let ids = picked.map { embedder.tokenizer.encode($0.text) }
        let hidden = embedder.encoder.configuration.hiddenSize
        var total = 0.0
        for start in stride(from: 0, to: ids.count, by: 16) {
            let batch = Array(ids[start..<min(ids.count, start + 16)])
            let clean = SentenceEmbedder.meanPool(embedder.encoder.forward(batch).hidden, lengths: batch.map(\.count))
            let (edited, _) = embedder.encoder.forward(batch) { index, x, lengths in
                guard index == layer else { return }
                let width = x.shape[1]
                for (b, length) in lengths.enumerated() where length > 2 {
                    let rows = length - 2
                    let base = (b * width + 1) * hidden
                    let inputs = (0..<(rows * hidden)).map { x.storage[base + $0] * sae.inputScale }
                    let reconstruction = sae.forward(inputs, rows: rows).reconstruction
                    for index in 0..<(rows * hidden) {
                        x.storage[base + index] = reconstruction[index] / sae.inputScale
                    }
                }
            }
            let spliced = SentenceEmbedder.meanPool(edited, lengths: batch.map(\.count))
            for (a, b) in zip(clean, spliced) { total += Double(SentenceEmbedder.cosine(a, b)) }
        }
        return total / Double(ids.count)
    }

    /// What a model's row stores as settings: the trainer's and the command's.
    package struct StoredSettings: Codable, Sendable {
        package var learningRate: Float
        package var steps: Int
        package var warmupSteps: Int
        package var decayFraction: Float
        package var deadAfterTokens: Int
        package var width: Int
        package var k: Int?
        package var l1: Float
        package var batch: Int
        package var seed: UInt64
        package var checkpointEvery: Int
        package var logEvery: Int

        init(trainer: SAETrainer.Settings, options: TrainOptions) {
            learningRate = trainer.learningRate
            steps = trainer.steps
            warmupSteps = trainer.warmupSteps
            decayFraction = trainer.decayFraction
            deadAfterTokens = trainer.deadAfterTokens
            width = options.width
            k = options.k
            l1 = options.l1
            batch = options.batch
            seed = options.seed
            checkpointEvery = options.checkpointEvery
            logEvery = options.logEvery
        }

        package var trainer: SAETrainer.Settings {
            var settings = SAETrainer.Settings()
            settings.learningRate = learningRate
            settings.steps = steps
            settings.warmupSteps = warmupSteps
            settings.decayFraction = decayFraction
            settings.deadAfterTokens = deadAfterTokens
            return settings
        }

        package var options: TrainOptions {
            var options = TrainOptions()
            options.width = width
            options.k = k
            options.l1 = l1
            options.steps = steps
            options.batch = batch
            options.learningRate = learningRate
            options.seed = seed
            options.checkpointEvery = checkpointEvery
            options.logEvery = logEvery
            return options
        }

        func json() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }
    }

    /// The settings SAE `id` was trained with, as its `settings_json` keeps them; a value that
    /// does not read back is a ``StoredValueError`` naming the SAE and the field.
    static func settings(from json: String, sae id: Int64) throws(StoredValueError) -> StoredSettings {
        try JSONDecoder().decode(
            StoredSettings.self, stored: json, "settings", row: "SAE \(id)", column: "settings_json")
    }
}
