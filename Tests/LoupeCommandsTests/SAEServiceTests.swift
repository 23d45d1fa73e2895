import Foundation
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTensor
import Testing

/// SAE activations collected from the real MiniLM over a real workspace, and a training run
/// stopped half-way and resumed from its checkpoint.
@Suite(.serialized) struct SAEServiceTests {
    private func workspace() throws -> (Workspace, SAEService, ModelLibrary) {
        let directory = TestEnvironment.temporaryDirectory()
        try EvalCommandTests.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        let result = try TestEnvironment.run([
            "--workspace", directory + "/w.sqlite", "ingest", directory + "/corpus.jsonl", "--no-embed",
        ])
        #expect(result.status == 0, "\(result.error)")
        let workspace = try Workspace(path: directory + "/w.sqlite")
        let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
        return (workspace, SAEService(workspace: workspace, models: models), models)
    }

    @Test func collectedRowsAreMiniLMsResidualStreamWithTheirTokens() throws {
        let (workspace, service, models) = try workspace()
        let collected = try service.collect(layer: 2, tokens: 10_000)
        let chunks = try workspace.corpus.chunks()
        let embedder = try models.miniLM()
        let ids = chunks.map { embedder.tokenizer.encode($0.text) }
        // Every token but [CLS] and [SEP] of every chunk.
        #expect(collected.rows == ids.map { $0.count - 2 }.reduce(0, +))
        #expect(collected.chunks == chunks.count)
        let (rows, dimensions, values) = try service.activations(set: collected.set)
        #expect(rows == collected.rows && dimensions == 384)
        // Row 0 is the first chunk's first word piece after [CLS], as a direct forward pass gives it
        // (to float16 precision).
        let (_, captured) = embedder.encoder.forward([ids[0]], capture: CaptureRequest(residualLayers: [2]))
        let direct = captured.residual[2]![0].storage
        for d in 0..<dimensions {
            #expect(abs(values[d] - direct[dimensions + d]) <= 2e-3 * max(1, abs(direct[dimensions + d])))
        }
        let places = try workspace.saeTables.activationTokens(set: collected.set, rows: [0, 1])
        let pieces = embedder.tokenizer.tokens(ids[0])
        #expect(places.sorted { $0.row < $1.row }.map(\.token) == [pieces[1], pieces[2]])
        #expect(places.allSatisfy { $0.chunkID == chunks[0].id })
    }

    @Test func aStoppedTrainingRunResumesToTheSameSAE() throws {
        let (workspace, service, _) = try workspace()
        let collected = try service.collect(layer: 3, tokens: 10_000)
        var options = SAEService.TrainOptions()
        options.width = 32
        options.k = 4
        options.batch = 16
        options.steps = 40
        options.checkpointEvery = 10
        options.logEvery = 5
        let straight = try service.train(set: collected.set, layer: nil, options: options)
        #expect(straight.step == 40 && straight.metrics != nil)

        // Stopped at step 20 (as a cancel or a kill after the checkpoint leaves it), then resumed.
        let reporter = JobReporter.detached()
        let stopped = try service.train(set: collected.set, layer: nil, options: options, reporter: reporter) {
            if $0.step == 20 { reporter.cancel() }
        }
        #expect(stopped.step == 20 && stopped.metrics == nil)
        #expect(try workspace.saeTables.saeModel(stopped.model)?.step == 20)
        let resumed = try service.train(set: nil, layer: nil, options: options, resume: stopped.model)
        #expect(resumed.resumed && resumed.step == 40)
        #expect(
            try workspace.saeTables.saeModel(resumed.model)?.state
                == workspace.saeTables.saeModel(straight.model)?.state)
        #expect(resumed.metrics == straight.metrics)
        // The log has every 5th step once.
        #expect(
            try workspace.saeTables.saeTrainingLog(resumed.model).map(\.step)
                == Array(stride(from: 5, through: 40, by: 5)))
        let metrics = try #require(straight.metrics)
        #expect(metrics.l0 <= 4 && metrics.fvu < 1 && metrics.tokens == collected.rows)
        // Splicing a reconstruction in changes the sentence embedding, but not beyond recognition.
        let fidelity = try #require(metrics.embeddingFidelity)
        #expect(fidelity > 0.3 && fidelity < 1)
        // An SAE that reconstructs exactly (latents relu(x) and relu(−x), decoded as their
        // difference) leaves the embeddings as they were: fidelity 1.
        #expect(try service.fidelity(Self.identityAutoencoder(inputs: 384), layer: 3) > 0.99999)
    }

    /// An SAE that reconstructs its input exactly: latents relu(x) and relu(−x), decoded as their
    /// difference (the fidelity tests' clean reference).
    static func identityAutoencoder(inputs d: Int) -> SparseAutoencoder {
        var identity = SparseAutoencoder(inputs: d, width: 2 * d, activation: .relu(l1: 0))
        identity.encoder = [Float](repeating: 0, count: d * 2 * d)
        identity.decoder = [Float](repeating: 0, count: 2 * d * d)
        for i in 0..<d {
            identity.encoder[i * 2 * d + i] = 1
            identity.encoder[i * 2 * d + d + i] = -1
            identity.decoder[i * d + i] = 1
            identity.decoder[(d + i) * d + i] = -1
        }
        return identity
    }

    /// Settings no SAE can train with are refused before anything is stored, naming the option.
    @Test func settingsThatCannotTrainAreRefusedNamingTheOption() throws {
        let (workspace, service, _) = try workspace()
        let collected = try service.collect(layer: 3, tokens: 2_000)
        let cases: [(String, (inout SAEService.TrainOptions) -> Void)] = [
            ("--width must be at least 1 latent, got 0", { $0.width = 0 }),
            ("--k must be between 1 and the width (64), got 0", { $0.k = 0 }),
            ("--k must be between 1 and the width (64), got 65", { $0.k = 65 }),
            ("--steps must be at least 1, got 0", { $0.steps = 0 }),
            ("--batch must be at least 1 token, got 0", { $0.batch = 0 }),
            ("--lr must be a positive number, got -1.0", { $0.learningRate = -1 }),
            (
                "--l1 must be a number of at least 0, got -2.0",
                {
                    $0.k = nil
                    $0.l1 = -2
                }
            ),
        ]
        for (message, change) in cases {
            var options = SAEService.TrainOptions()
            options.width = 64
            options.batch = 16
            change(&options)
            let error = #expect(throws: SAEError.self) {
                try service.train(set: collected.set, layer: nil, options: options)
            }
            #expect(error?.description == message)
        }
        #expect(try workspace.saeTables.saeModels().isEmpty)
    }

    /// A 32-latent TopK (k 4) SAE trained 30 steps on 10,000 tokens after layer 3.
    private static func trainSmall(_ service: SAEService) throws -> (
        collected: SAEService.Collected, trained: SAEService.Trained
    ) {
        let collected = try service.collect(layer: 3, tokens: 10_000)
        var options = SAEService.TrainOptions()
        options.width = 32
        options.k = 4
        options.batch = 16
        options.steps = 30
        return (collected, try service.train(set: collected.set, layer: nil, options: options))
    }

    @Test func aFeatureCardShowsWhereTheFeatureFiresAndWhatItIsNear() throws {
        let (workspace, service, models) = try workspace()
        let (collected, trained) = try Self.trainSmall(service)
        let index = try SAEFeatureIndex(model: trained.model, database: workspace)
        #expect(index.summaries.count == 32)
        // Densities add up to L0 (each token fires k latents at most).
        let l0 = index.summaries.map(\.density).reduce(0, +)
        #expect(abs(l0 - trained.metrics!.l0) < 1e-9)
        let busiest = try #require(index.summaries.max { $0.density < $1.density })
        let card = try index.card(busiest.feature, database: workspace, embedder: try models.miniLM())
        let top = try #require(card.groups.first)
        #expect(top.name == "top" && !top.contexts.isEmpty)
        // The top context's centre token fires with the card's maximum, and its neighbours come
        // from the same chunk.
        let first = top.contexts[0]
        #expect(first.activation == card.maxActivation && first.activations[first.center] == first.activation)
        #expect(card.histogram.reduce(0, +) == Int((busiest.density * Double(collected.rows)).rounded()))
        #expect(card.vocabulary.count == 10 && card.neighbors.count == 5)
        // Labels are kept in the workspace and shown with the feature.
        try workspace.saeTables.setSAEFeatureLabel(model: trained.model, feature: busiest.feature, label: "busiest")
        let relabelled = try SAEFeatureIndex(model: trained.model, database: workspace)
        #expect(relabelled.summaries[busiest.feature].label == "busiest")
        #expect(throws: SAEError.self) { try index.card(99, database: workspace, embedder: nil) }
        // The SAE live on a text: the chunk's own tokens, at most k features each, strongest first,
        // and the same firing pattern as its collected (float16) rows for the busiest feature.
        let chunk = try workspace.corpus.chunks()[0]
        let live = try SAETextActivations(
            text: chunk.text, model: trained.model, database: workspace, embedder: try models.miniLM())
        let pieces = try models.miniLM().tokenizer.tokens(try models.miniLM().tokenizer.encode(chunk.text))
        #expect(live.tokens == Array(pieces.dropFirst().dropLast()))
        #expect(
            live.features.allSatisfy { $0.count <= 4 && $0.map(\.activation) == $0.map(\.activation).sorted(by: >) })
        let firing = live.activations(of: busiest.feature).map { $0 > 0 }
        let sae = try service.stored(trained.model).trainer.sae
        let (_, dimensions, values) = try service.activations(set: collected.set)
        let n = live.tokens.count
        let codes = sae.forward(values[0..<(n * dimensions)].map { $0 * sae.inputScale }, rows: n).codes
        let collectedFiring = (0..<n).map { codes[$0 * sae.width + busiest.feature] > 0 }
        let agreeing = zip(firing, collectedFiring).filter { $0 == $1 }.count
        #expect(Double(agreeing) >= 0.9 * Double(n), "\(agreeing) of \(n)")
    }

    /// `sae train` stores the feature index with the SAE, so the panel reads it instead of
    /// encoding the whole activation set on every launch; a stale or damaged one is rebuilt to the
    /// same bytes, and a cancelled build stops and stores nothing.
    @Test func theFeatureIndexIsStoredWithTheSAEAndRebuiltWhenStale() throws {
        let (workspace, service, models) = try workspace()
        let (collected, trained) = try Self.trainSmall(service)
        let stored = try #require(try workspace.saeTables.saeFeatureIndex(model: trained.model))
        #expect(stored.step == 30)
        let read = try SAEFeatureIndex(model: trained.model, database: workspace)

        // Stale (another step): encoded again, to the same bytes and the same features and cards.
        try workspace.saeTables.storeSAEFeatureIndex(model: trained.model, step: 29, data: stored.data)
        let built = try SAEFeatureIndex(model: trained.model, database: workspace)
        #expect(try workspace.saeTables.saeFeatureIndex(model: trained.model)?.step == 30)
        #expect(try workspace.saeTables.saeFeatureIndex(model: trained.model)?.data == stored.data)
        #expect(read.summaries == built.summaries)
        #expect(abs(read.summaries.map(\.density).reduce(0, +) - trained.metrics!.l0) < 1e-9)
        let busiest = try #require(read.summaries.max { $0.density < $1.density })
        let embedder = try models.miniLM()
        let card = try read.card(busiest.feature, database: workspace, embedder: embedder)
        #expect(card == (try built.card(busiest.feature, database: workspace, embedder: embedder)))
        // The list's preview: the token of its strongest firing first, as the card's top context.
        let top = try #require(card.groups.first?.contexts.first)
        #expect(busiest.topTokens?.first == top.tokens[top.center])
        #expect(read.summaries.allSatisfy { $0.density == 0 || !($0.topTokens ?? []).isEmpty })

        // Damaged at the right step: not trusted, rebuilt.
        try workspace.saeTables.storeSAEFeatureIndex(model: trained.model, step: 30, data: Data("not an index".utf8))
        #expect(try SAEFeatureIndex(model: trained.model, database: workspace).summaries == read.summaries)
        #expect(try workspace.saeTables.saeFeatureIndex(model: trained.model)?.data == stored.data)

        // Cancelled while it encodes: stops with JobCancelled, the stale index stays as it was.
        try workspace.saeTables.storeSAEFeatureIndex(model: trained.model, step: 29, data: Data())
        let reporter = JobReporter.detached()
        reporter.cancel()
        #expect(throws: JobCancelled.self) {
            try SAEFeatureIndex(model: trained.model, database: workspace, reporter: reporter)
        }
        #expect(try workspace.saeTables.saeFeatureIndex(model: trained.model)?.step == 29)
    }
}
