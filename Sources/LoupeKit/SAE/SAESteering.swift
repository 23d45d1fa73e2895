import Foundation
import LoupeBase
import LoupeModels
import LoupeStore
import LoupeTensor

/// A generation with an SAE's features steered or ablated in SmolLM2's residual stream, beside
/// the same generation without: `loupe generate --steer`, `loupe sae steer` and the SAE panel's
/// `s` on a feature card.
package struct SAESteering: Sendable {
    /// Add `alpha` times feature `feature`'s decoder direction at every position (α in the
    /// feature's activation units, those of its card).
    package struct Steer: Hashable, Sendable, Codable {
        package var feature: Int
        package var alpha: Float

        package init(feature: Int, alpha: Float) {
            self.feature = feature
            self.alpha = alpha
        }

        /// `FEATURE:α`, as `--steer` takes it.
        package init(parsing text: String) throws(SAEError) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let feature = Int(parts[0]), feature >= 0, let alpha = Float(parts[1]),
                alpha.isFinite
            else { throw SAEError("--steer \(text): write FEATURE:α, e.g. 12:8 or 12:-4") }
            self.init(feature: feature, alpha: alpha)
        }
    }

    package struct Request: Sendable {
        /// The SAE (nil: the newest finished SmolLM2 SAE in the workspace).
        package var sae: Int64?
        package var steers: [Steer] = []
        package var ablations: [Int] = []
        package var prompt: String
        package var system: String?
        /// The prompt as it is, without the chat template.
        package var raw = false
        package var options = GenerationOptions()
        package var precision = LlamaPrecision.q8

        package init(sae: Int64?, prompt: String) {
            self.sae = sae
            self.prompt = prompt
        }
    }

    /// One answer's token and its log-probability under the plain and the steered model (both
    /// teacher-forced on the prompt and the answer's earlier tokens).
    package struct TokenChange: Hashable, Sendable, Codable {
        package var id: Int32
        package var text: String
        package var plainLogprob: Float
        package var steeredLogprob: Float
        /// steered − plain.
        package var delta: Float

        init(id: Int32, text: String, plainLogprob: Float, steeredLogprob: Float) {
            self.id = id
            self.text = text
            self.plainLogprob = plainLogprob
            self.steeredLogprob = steeredLogprob
            delta = steeredLogprob - plainLogprob
        }
    }

    package struct Answer: Hashable, Sendable, Codable {
        package var text: String
        package var stopReason: String
        package var tokens: [TokenChange]
        /// Σ log p of the answer's tokens under each model.
        package var plainLogprob: Float
        package var steeredLogprob: Float

        init(text: String, stopReason: String, tokens: [TokenChange]) {
            self.text = text
            self.stopReason = stopReason
            self.tokens = tokens
            plainLogprob = tokens.reduce(0) { $0 + $1.plainLogprob }
            steeredLogprob = tokens.reduce(0) { $0 + $1.steeredLogprob }
        }
    }

    package struct Result: Hashable, Sendable, Codable {
        package var sae: Int64
        package var layer: Int
        package var steers: [Steer]
        package var ablations: [Int]
        /// The steered and ablated features' labels, by feature number.
        package var labels: [String: String]
        package var precision: String
        package var promptTokens: Int
        /// The answer without the intervention, and with it.
        package var plain: Answer
        package var steered: Answer
    }

    let database: any SQLDatabase
    let models: ModelLibrary

    package init(database: any SQLDatabase, models: ModelLibrary) {
        self.database = database
        self.models = models
    }

    /// The SAE `id`, or the newest finished one on SmolLM2's stream, with its layer; refuses an
    /// SAE of MiniLM's.
    package func languageModelSAE(_ id: Int64?) throws -> (id: Int64, layer: Int, sae: SparseAutoencoder) {
        let tables = SAETables(database)
        let sources = Dictionary(uniqueKeysWithValues: try tables.activationSets().map { ($0.id, $0.model) })
        let service = SAEService(database: database, models: models)
        let chosen: Int64
        if let id {
            chosen = id
        } else {
            let finished = try tables.saeModelHeaders().filter { record in
                guard sources[record.setID] == SAEService.languageModelName else { return false }
                let settings = try SAEService.settings(from: record.settingsJSON, sae: record.id)
                return record.step >= settings.steps
            }
            guard let newest = finished.last else {
                throw SAEError(
                    "the workspace has no finished SAE on SmolLM2: loupe sae collect --model smollm2 --layer 15, "
                        + "then loupe sae train --model smollm2 --layer 15")
            }
            chosen = newest.id
        }
        let (record, trainer) = try service.stored(chosen)
        guard sources[record.setID] == SAEService.languageModelName else {
            throw SAEError(
                "SAE \(chosen) reads \(sources[record.setID] ?? "another model")'s stream, not SmolLM2's: "
                    + "steering needs an SAE trained with --model smollm2")
        }
        return (chosen, record.layer, trainer.sae)
    }

    /// Generates the answer to `request.prompt` without and with the intervention (the same
    /// options, so a greedy or seeded answer differs only by it), then reads both answers'
    /// tokens under both models.
    package func run(_ request: Request, isCancelled: () -> Bool = { false }) throws -> Result {
        guard !request.steers.isEmpty || !request.ablations.isEmpty else {
            throw SAEError("nothing to steer: give --steer FEATURE:α or --ablate FEATURE")
        }
        let (id, layer, sae) = try languageModelSAE(request.sae)
        let intervention = SAEIntervention(sae: sae, layer: layer)
        let hook = try intervention.steering(
            request.steers.map { ($0.feature, $0.alpha) }, ablating: request.ablations)
        let plain = try models.smolLM2(precision: request.precision)
        let steered = Generator(
            model: try plain.model.hooked(hook), tokenizer: plain.tokenizer, template: plain.template)
        var messages: [ChatMessage] = []
        if let system = request.system { messages.append(.system(system)) }
        messages.append(.user(request.prompt))
        let prompt = request.raw ? plain.tokenizer.encode(request.prompt) : try plain.prompt(messages)
        let without = try plain.generate(prompt: prompt, options: request.options, isCancelled: isCancelled)
        let with = try steered.generate(prompt: prompt, options: request.options, isCancelled: isCancelled)
        func answer(_ generation: Generation) throws -> Answer {
            let ids = generation.tokens.map(\.id)
            let before = try Self.logprobs(of: ids, after: prompt, model: plain.model)
            let after = try Self.logprobs(of: ids, after: prompt, model: steered.model)
            return Answer(
                text: generation.text, stopReason: generation.stopReason.rawValue,
                tokens: ids.indices.map {
                    TokenChange(
                        id: ids[$0], text: plain.tokenizer.piece(ids[$0]), plainLogprob: before[$0],
                        steeredLogprob: after[$0])
                })
        }
        var labels: [String: String] = [:]
        for (feature, label) in try SAETables(database).saeFeatureLabels(model: id)
        where request.steers.map(\.feature).contains(feature) || request.ablations.contains(feature) {
            labels[String(feature)] = label
        }
        return Result(
            sae: id, layer: layer, steers: request.steers, ablations: request.ablations, labels: labels,
            precision: request.precision.rawValue, promptTokens: prompt.count, plain: try answer(without),
            steered: try answer(with))
    }

    /// log p(ids[i] | prompt, ids[..<i]) under `model`, teacher-forced in one pass.
    static func logprobs(of ids: [Int32], after prompt: [Int32], model: LlamaModel) throws -> [Float] {
        guard !ids.isEmpty else { return [] }
        let context = prompt + ids.dropLast()
        let logits = try model.logits(for: context)
        return ids.indices.map { i in
            let row = logits.row(prompt.count - 1 + i)
            let logSumExp = row.withUnsafeBufferPointer { Sampler.logSoftmaxSummary($0, top: 0).logSumExp }
            return row[row.startIndex + Int(ids[i])] - logSumExp
        }
    }
}
