import Foundation
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTensor
import Testing

/// SAEs on SmolLM2's residual stream: activations collected from the real model over the
/// Cranfield abstracts, a small SAE trained on them with its next-token-loss fidelity, its card,
/// steering with and without, and the commands that show them.
@Suite(.serialized) struct SAELanguageModelTests {
    static let layer = 15

    private func workspace() throws -> (Workspace, SAEService, ModelLibrary, String) {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl").path
        let result = try TestEnvironment.run(["--workspace", directory + "/w.sqlite", "ingest", corpus, "--no-embed"])
        #expect(result.status == 0, "\(result.error)")
        let workspace = try Workspace(path: directory + "/w.sqlite")
        let models = ModelLibrary(root: ModelsCommandTests.modelsRoot)
        return (workspace, SAEService(workspace: workspace, models: models), models, directory + "/w.sqlite")
    }

    /// Rows are SmolLM2's stream after the layer for every token but each chunk's first, in chunk
    /// order, with their pieces: row 0 is the first chunk's second token as a direct pass gives it.
    @Test func collectedRowsAreTheStreamAfterTheLayer() throws {
        let (workspace, service, models, _) = try workspace()
        let collected = try service.collectLanguageModel(layer: Self.layer, tokens: 700)
        #expect(collected.rows == 700)
        let (rows, dimensions, values) = try service.activations(set: collected.set)
        #expect(rows == 700 && dimensions == 576)
        let generator = try models.smolLM2()
        let chunks = try workspace.corpus.chunks()
        let ids = Array(generator.tokenizer.encode(chunks[0].text).prefix(256))
        let capture = LlamaResidualCapture()
        _ = try generator.model.hooked(capture.hook(layer: Self.layer)).logits(for: ids)
        let direct = try #require(capture.value)
        for d in 0..<dimensions {
            let expected = direct.storage[576 + d]
            #expect(abs(values[d] - expected) <= 2e-3 * max(1, abs(expected)), "dimension \(d)")
        }
        let places = try workspace.saeTables.activationTokens(set: collected.set, rows: [0, 1])
            .sorted { $0.row < $1.row }
        #expect(places.map(\.token) == [generator.tokenizer.piece(ids[1]), generator.tokenizer.piece(ids[2])])
        #expect(places.map(\.position) == [1, 2] && places.allSatisfy { $0.chunkID == chunks[0].id })
        #expect(try workspace.saeTables.activationSets().last?.model == ModelLibrary.smolLM2Name)
    }

    /// A small SAE: its metrics, its fidelity (the spliced-in loss between the clean and the
    /// zeroed stream's, an exact SAE's equal to the clean loss), its card and its features on a text.
    @Test func aTrainedSAEReportsItsLossFidelityAndCard() throws {
        let (workspace, service, models, _) = try workspace()
        let collected = try service.collectLanguageModel(layer: Self.layer, tokens: 2048)
        var options = SAEService.TrainOptions()
        options.width = 256
        options.k = 16
        options.batch = 128
        options.steps = 60
        let trained = try service.train(
            set: nil, layer: Self.layer, source: ModelLibrary.smolLM2Name, options: options, fidelityTokens: 200)
        #expect(trained.set == collected.set)
        let metrics = try #require(trained.metrics)
        #expect(metrics.l0 <= 16 && metrics.explainedVariance > 0 && metrics.embeddingFidelity == nil)
        let fidelity = try #require(metrics.languageModelFidelity)
        #expect(fidelity.heldOut && fidelity.tokens >= 200)
        #expect(fidelity.cleanLoss < fidelity.splicedLoss && fidelity.splicedLoss < fidelity.zeroAblatedLoss)
        #expect(fidelity.lossRecovered > 0 && fidelity.lossRecovered < 1)

        // An SAE that reconstructs exactly (relu(x) and relu(−x), decoded as their difference)
        // scores the clean model's loss.
        let identity = SAEServiceTests.identityAutoencoder(inputs: 576)
        let exact = try service.languageModelFidelity(identity, layer: Self.layer, set: collected.set, tokens: 200)
        #expect(abs(exact.splicedLoss - exact.cleanLoss) < 1e-9 && abs(exact.lossRecovered - 1) < 1e-9)

        let index = try SAEFeatureIndex(model: trained.model, database: workspace)
        #expect(index.source == ModelLibrary.smolLM2Name)
        let feature = try #require(index.summaries.max { $0.density < $1.density }).feature
        let card = try index.card(feature, database: workspace, models: models)
        #expect(card.vocabulary.isEmpty && card.promotes?.count == 10 && card.suppresses?.count == 10)
        let contexts = card.groups.flatMap(\.contexts)
        #expect(!contexts.isEmpty && contexts.allSatisfy { $0.activations[$0.center] > 0 })
        // The top token it promotes is the argmax of the direction's lens logits.
        let direction = SAEIntervention(sae: index.sae, layer: Self.layer).direction(feature)
        let lens = try models.smolLM2().model.lensLogits(direction).storage
        let best = lens.indices.max { lens[$0] < lens[$1] }!
        #expect(card.promotes?.first?.name == (try models.smolLM2()).tokenizer.piece(Int32(best)))

        let text = "The boundary layer on a heated flat plate."
        let activations = try SAETextActivations(text: text, model: trained.model, database: workspace, models: models)
        #expect(activations.tokens.count == (try models.smolLM2()).tokenizer.encode(text).count)
        #expect(activations.features[0].isEmpty && activations.features.dropFirst().allSatisfy { $0.count <= 16 })
    }

    /// Steering through the service: α = 0 gives the plain answer and moves no log-probability; a
    /// strong steer moves them.
    @Test func steeringWithAndWithout() throws {
        let (workspace, service, models, _) = try workspace()
        _ = try service.collectLanguageModel(layer: Self.layer, tokens: 512)
        var options = SAEService.TrainOptions()
        options.width = 64
        options.k = 8
        options.batch = 64
        options.steps = 10
        let trained = try service.train(
            set: nil, layer: Self.layer, source: ModelLibrary.smolLM2Name, options: options, fidelityTokens: 50)
        let steering = SAESteering(database: workspace, models: models)
        var request = SAESteering.Request(sae: nil, prompt: "What keeps an aircraft in the air?")
        request.options.maxTokens = 10
        request.steers = [SAESteering.Steer(feature: 5, alpha: 0)]
        let same = try steering.run(request)
        #expect(same.sae == trained.model && same.layer == Self.layer)
        #expect(same.plain.text == same.steered.text && !same.plain.tokens.isEmpty)
        #expect(same.plain.tokens.allSatisfy { $0.delta == 0 } && same.steered.tokens.allSatisfy { $0.delta == 0 })
        request.steers = [SAESteering.Steer(feature: 5, alpha: 60)]
        let moved = try steering.run(request)
        #expect(moved.plain.text == same.plain.text)
        #expect(moved.plain.tokens.contains { abs($0.delta) > 0.01 })
        // The steered answer is the steered model's greedy choice: no less likely under it than
        // the plain answer is.
        #expect(moved.steered.steeredLogprob >= moved.plain.steeredLogprob - 1e-3)
        var outside = request
        outside.steers = [SAESteering.Steer(feature: 64, alpha: 1)]
        #expect(throws: ModelError.self) { _ = try steering.run(outside) }
    }

    /// The commands: collect and train with --model smollm2, the card, and generate --steer with
    /// α = 0 printing the same answer twice.
    @Test func theCommandsCollectTrainShowAndSteer() throws {
        let (_, _, _, path) = try workspace()
        func run(_ arguments: [String]) throws -> String {
            let result = try TestEnvironment.run(
                ["--workspace", path] + arguments, environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return result.output
        }
        #expect(
            try run(["sae", "collect", "--model", "smollm2", "--layer", "15", "--tokens", "600"]).contains("600 tokens")
        )
        let trained = try run([
            "sae", "train", "--model", "smollm2", "--layer", "15", "--width", "64", "--k", "8", "--steps", "10",
            "--batch", "64", "--fidelity-tokens", "60", "--json",
        ])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(trained.utf8)) as? [String: Any])
        for key in ["l0", "explained_variance", "dead_fraction", "clean_loss", "spliced_loss", "zero_ablated_loss"] {
            #expect(json[key] is Double, "\(key) in \(trained)")
        }
        #expect(try run(["sae", "list"]).contains("layer 15 of SmolLM2"))
        #expect(try run(["sae", "feature", "1", "0"]).contains("promotes"))
        // One feature's activations over a text: SmolLM2's pieces carry their own spaces, so the
        // line with its [piece:activation] marks taken out is the text itself.
        let sentence = "The lift of a thin wing rises with its angle of attack."
        let strongest = try #require(
            try run(["sae", "activate", "1", sentence, "--json"]).firstMatch(of: /"feature" : (\d+)/)?.1)
        let marked = try run(["sae", "activate", "1", sentence, "--feature", String(strongest)])
        #expect(marked.contains(":"), "\(marked)")
        let unmarked = marked.replacing(/\[([^\]]*):\d+\.\d\d\]/) { String($0.1) }
        #expect(unmarked.trimmingCharacters(in: .newlines) == sentence, "\(marked)")
        let steered = try run([
            "generate", "What is lift?", "--steer", "3:0", "--max-tokens", "6", "--json",
        ])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(steered.utf8)) as? [String: Any])
        let plain = try #require(record["plain"] as? [String: Any])
        let with = try #require(record["steered"] as? [String: Any])
        #expect(plain["text"] as? String == with["text"] as? String)
        let text = try run(["sae", "steer", "1", "3", "--alpha", "0", "--max-tokens", "6", "What", "is", "lift?"])
        #expect(text.contains("without: ") && text.contains("with:    "))
    }

    /// `sae at` (the token view's `x`): the features at the position that chose a local step's
    /// token are the SAE's codes of SmolLM2's stream there, read from the step's own context.
    @Test func theFeaturesWhereALocalStepChoseAToken() throws {
        let (file, run) = try LocalAgentTests.calculatorRun()
        try #require(run.status == 0 || run.error.contains("step limit 2 reached"), "\(run.output)\(run.error)")
        let workspace = try Workspace(path: file)
        let models = ModelLibrary(root: ModelsCommandTests.modelsRoot)
        let service = SAEService(workspace: workspace, models: models)
        let collected = try service.collectLanguageModel(layer: Self.layer, tokens: 100_000)
        var options = SAEService.TrainOptions()
        options.width = 32
        options.k = 4
        options.batch = min(16, collected.rows)
        options.steps = 5
        let trained = try service.train(
            set: collected.set, layer: nil, options: options, fidelityTokens: 20)
        let result = try TestEnvironment.run(
            ["--workspace", file, "sae", "at", "--trace", "1", "--span", "1", "--token", "3", "--json"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        try #require(result.status == 0, "\(result.error)")
        let found = try JSONDecoder().decode(TokenFeatures.self, from: Data(result.output.utf8))
        #expect(found.sae == trained.model && found.layer == Self.layer && found.token == 3)
        let (context, generator) = try TokenInsidesBrowser(workspace: workspace, models: models).context(
            trace: 1, span: 1, token: 3, precision: .q8)
        #expect(found.position == context.ids.count - 1)
        let (_, stored) = try service.stored(trained.model)
        let direct = try SAETextActivations(ids: context.ids, sae: stored.sae, layer: Self.layer, generator: generator)
        let expected = direct.features[context.ids.count - 1]
        #expect(!expected.isEmpty && expected.count <= 4)
        #expect(found.features.map(\.feature) == expected.map(\.feature))
        for (a, b) in zip(found.features, expected) { #expect(abs(a.activation - b.activation) <= 1e-5) }

        // The maxima come from the SAE's feature index, built from its training tokens: with those
        // damaged, the features still show, without maxima, and say why.
        _ = try workspace.writeStatements { sql in
            try sql.execute("DELETE FROM sae_feature_indexes", [])
            try sql.execute("UPDATE sae_tokens SET position = 'damaged'", [])
        }
        let damaged = try TestEnvironment.run(
            ["--workspace", file, "sae", "at", "--trace", "1", "--span", "1", "--token", "3", "--json"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        try #require(damaged.status == 0, "\(damaged.error)")
        let snake = JSONDecoder()
        snake.keyDecodingStrategy = .convertFromSnakeCase
        let without = try snake.decode(TokenFeatures.self, from: Data(damaged.output.utf8))
        #expect(without.features.map(\.feature) == found.features.map(\.feature))
        #expect(without.features.allSatisfy { $0.maxActivation == nil })
        let reason = try #require(without.maximaUnreadable)
        let whole = try snake.decode(TokenFeatures.self, from: Data(result.output.utf8))
        #expect(whole.maximaUnreadable == nil && whole.features.allSatisfy { $0.maxActivation != nil })
        #expect(reason.contains("SAE \(trained.model)") && reason.contains("position"), "\(reason)")
        let printed = try TestEnvironment.run(
            ["--workspace", file, "sae", "at", "--trace", "1", "--span", "1", "--token", "3"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        #expect(
            printed.status == 0 && printed.output.contains("⚠ SAE \(trained.model)'s feature maxima are unreadable"))
    }
}
