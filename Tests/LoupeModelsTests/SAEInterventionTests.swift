import Foundation
import LoupeBase
import LoupeModels
import LoupeTensor
import Testing

/// Steering and ablating SmolLM2 with an SAE's features through ``LlamaResidualHook``: the hook
/// changes nothing it should not (α = 0, an inactive feature), and a steered pass is the numpy
/// reference's forward pass with the same vector added at the same layer.
///
/// The SAE is an untrained one (random unit decoder rows): the intervention's arithmetic does not
/// depend on what the features mean. Needs the model (`scripts/fetch-smollm2`) and, for the
/// reference, the peers' Python (`scripts/python-peers`).
@Suite(.serialized)
struct SAEInterventionTests {
    static let text =
        "The lighthouse keeper climbed the spiral stairs every evening at dusk. He wound the clockwork, "
        + "trimmed the wick, and watched the beam sweep across the black water until the ships had passed."

    static func sae(width: Int = 256, k: Int = 2) -> SparseAutoencoder {
        var sae = SparseAutoencoder(inputs: 576, width: width, activation: .topK(k: k, auxK: 0, auxCoefficient: 0))
        sae.inputScale = 0.5
        return sae
    }

    static func generator(_ model: LlamaModel) throws -> Generator {
        let file = try GGUFFile(path: SmolLM2.modelPath)
        return Generator(model: model, tokenizer: try BPETokenizer(file: file), template: try ChatTemplate(file: file))
    }

    static func bits(_ tensor: Tensor) -> [UInt32] { tensor.storage.map(\.bitPattern) }

    /// Steering with α = 0 runs the hook (it adds a zero vector at every position) and gives the
    /// plain model's logits bit for bit, in a prefill and in each decode step, and the same
    /// greedy answer with the same log-probabilities.
    @Test func steeringWithZeroAlphaIsThePlainModel() throws {
        let plain = try SmolLM2.quantizedModel()
        let intervention = SAEIntervention(sae: Self.sae(), layer: 15)
        let steered = try plain.hooked(intervention.steering([(feature: 7, alpha: 0)], ablating: []))
        let tokenizer = try Self.generator(plain).tokenizer
        let ids = tokenizer.encode(Self.text)
        #expect(Self.bits(try plain.logits(for: ids)) == Self.bits(try steered.logits(for: ids)))
        var options = GenerationOptions()
        options.maxTokens = 12
        let prompt = try Self.generator(plain).prompt([.user("Where do lighthouses stand?")])
        let a = try Self.generator(plain).generate(prompt: prompt, options: options)
        let b = try Self.generator(steered).generate(prompt: prompt, options: options)
        #expect(a.tokens == b.tokens && a.text == b.text)
        // The same vector with α ≠ 0 does change the logits: the hook is on the path.
        let moved = try plain.hooked(intervention.steering([(feature: 7, alpha: 40)], ablating: []))
        #expect(Self.bits(try plain.logits(for: ids)) != Self.bits(try moved.logits(for: ids)))
    }

    /// Ablating a feature that fires nowhere in the text leaves the logits bit for bit; ablating
    /// one that fires changes them, at its positions and after, never before.
    @Test func ablatingAnInactiveFeatureChangesNothing() throws {
        let plain = try SmolLM2.quantizedModel()
        let sae = Self.sae()
        let intervention = SAEIntervention(sae: sae, layer: 15)
        let ids = try Self.generator(plain).tokenizer.encode(Self.text)
        // Which features fire where, read from the plain stream after layer 15.
        let captured = LlamaResidualCapture()
        _ = try plain.hooked(captured.hook(layer: 15)).logits(for: ids)
        let stream = try #require(captured.value)
        let (rows, forward) = try #require(intervention.encode(stream, positions: Array(0..<ids.count)))
        #expect(rows == Array(1..<ids.count))
        var firstFiring = [Int?](repeating: nil, count: sae.width)
        for (index, row) in rows.enumerated() {
            for j in 0..<sae.width where forward.codes[index * sae.width + j] > 0 && firstFiring[j] == nil {
                firstFiring[j] = row
            }
        }
        let inactive = try #require(firstFiring.firstIndex { $0 == nil })
        let active = try #require(firstFiring.firstIndex { $0 != nil })
        let clean = try plain.logits(for: ids)
        let without = try plain.hooked(intervention.steering([], ablating: [inactive])).logits(for: ids)
        #expect(Self.bits(clean) == Self.bits(without))
        let ablated = try plain.hooked(intervention.steering([], ablating: [active])).logits(for: ids)
        let first = try #require(firstFiring[active])
        for position in 0..<ids.count {
            let same = clean.row(position).map(\.bitPattern) == ablated.row(position).map(\.bitPattern)
            #expect(same == (position < first), "position \(position), feature \(active) first fires at \(first)")
        }
    }

    /// A feature steered at layer 15 (f32) gives the numpy reference's logits with α · d / s added
    /// to the stream leaving layer 15, within 1e-3 at every position, with the same top token; the
    /// steered logits differ from the clean ones by far more than that.
    @Test func steeringMatchesTheNumpyReference() throws {
        let model = try SmolLM2.model()
        let sae = Self.sae()
        let intervention = SAEIntervention(sae: sae, layer: 15)
        let (feature, alpha): (Int, Float) = (11, 30)
        let vector = intervention.direction(feature).map { $0 * alpha }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-steer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logitsPath = directory.appendingPathComponent("logits.f32").path
        let reply = try SmolLM2.reference([
            "texts": [Self.text], "positions": 32, "logits": logitsPath,
            "steer": ["layer": 15, "vector": vector.map(Double.init)],
        ])
        let ids = try #require((reply["prompts"] as? [[Int]])?.first).map(Int32.init)
        let steered = try model.hooked(intervention.steering([(feature, alpha)], ablating: [])).logits(for: ids)
        let clean = try model.logits(for: ids)
        let reference = try Data(contentsOf: URL(fileURLWithPath: logitsPath))
        let vocabulary = model.configuration.vocabularySize
        #expect(reference.count == ids.count * vocabulary * 4)
        var (worst, moved): (Float, Float) = (0, 0)
        for position in 0..<ids.count {
            let expected = reference.withUnsafeBytes { raw in
                (0..<vocabulary).map {
                    Float(
                        bitPattern: UInt32(
                            littleEndian: raw.loadUnaligned(
                                fromByteOffset: (position * vocabulary + $0) * 4, as: UInt32.self)))
                }
            }
            let row = Array(steered.row(position))
            worst = max(worst, zip(row, expected).map { abs($0 - $1) }.max() ?? .infinity)
            moved = max(moved, zip(row, clean.row(position)).map { abs($0 - $1) }.max() ?? 0)
            #expect(SmolLM2.argmax(row) == SmolLM2.argmax(expected), "position \(position): top-1")
        }
        #expect(worst <= 1e-3, "max |Δlogit| against the reference \(worst)")
        #expect(moved > 1, "steering moved the logits by at most \(moved)")
    }

    /// Steered at the last layer, the logits are the logit lens of the steered stream (Loupe's
    /// lens path: the final norm and the head on the clean final stream plus α · d / s), and with
    /// a large α every position's top token is the one the direction alone promotes most (what a
    /// feature card lists first under "promotes").
    @Test func steeringAtTheLastLayerMovesTheLogitsAlongTheDirectionsLogitEffect() throws {
        let model = try SmolLM2.model()
        let last = model.configuration.layers - 1
        let intervention = SAEIntervention(sae: Self.sae(), layer: last)
        let ids = try Self.generator(model).tokenizer.encode(Self.text)
        let positions = Array(0..<ids.count)
        let probe = try model.probe(ids, LlamaProbeRequest(positions: positions))
        let final = try #require(probe.residuals.last)
        let feature = 3
        let direction = intervention.direction(feature)
        for alpha: Float in [5, 50] {
            let steered = try model.hooked(intervention.steering([(feature, alpha)], ablating: [])).logits(for: ids)
            var stream = final
            for position in positions { for i in 0..<576 { stream[position * 576 + i] += alpha * direction[i] } }
            let lens = model.lensLogits(stream)
            let worst = zip(steered.storage, lens.storage).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst <= 1e-3, "α \(alpha): max |Δlogit| against the lens of the steered stream \(worst)")
        }
        let promoted = SmolLM2.argmax(Array(model.lensLogits(direction).storage))
        let strong = try model.hooked(intervention.steering([(feature, 1e6)], ablating: [])).logits(for: ids)
        for position in positions {
            #expect(SmolLM2.argmax(Array(strong.row(position))) == promoted, "position \(position)")
        }
    }
}
