import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// The real all-MiniLM-L6-v2 weights against fixtures written by the independent numpy
/// reference (`scripts/reference/minilm_reference.py`): token ids exact, embeddings and
/// attention probabilities within 1e-4. `scripts/fetch-minilm` (run by `.ci/run` and
/// `scripts/setup`) puts the weights where these tests look.
@Suite(.enabled(if: MiniLMFixtures.modelDirectory != nil, "MiniLM weights not found: run scripts/fetch-minilm"))
struct MiniLMParityTests {
    static let embedder: SentenceEmbedder? = MiniLMFixtures.modelDirectory.flatMap {
        try? SentenceEmbedder(directory: $0)
    }

    @Test(arguments: MiniLMFixtures.sentences.indices)
    func tokenIdsMatchExactly(index: Int) throws {
        let embedder = try #require(Self.embedder)
        let sentence = MiniLMFixtures.sentences[index]
        let ids = embedder.tokenizer.encode(sentence.text)
        #expect(ids.map(Int.init) == sentence.ids, "\(embedder.tokenizer.tokens(ids)) vs \(sentence.tokens)")
    }

    @Test func embeddingsMatchWithinTolerance() throws {
        let embedder = try #require(Self.embedder)
        // One batch of all sentences: padding must not change any result.
        let results = embedder.embed(MiniLMFixtures.sentences.map(\.text), batchSize: 32)
        for (result, sentence) in zip(results, MiniLMFixtures.sentences) {
            let difference = zip(result.vector, sentence.embedding).map { abs($0 - $1) }.max() ?? .infinity
            #expect(difference <= 1e-4, "max |diff| \(difference) for \(sentence.text.prefix(40))")
        }
    }

    /// Int8 (weights per channel, activations per token, Q·K·V and FFN-up smoothed) against the
    /// numpy reference's fp32 embeddings of the varied fixture sentences (accents, CJK, emoji, a URL,
    /// a passage past 256 tokens). Measured 0.9982 at the lowest; 0.997 leaves room for other CPUs'
    /// rounding without letting a broken kernel (cosines of 0.9 and below) through.
    @Test func int8EmbeddingsStayCloseToTheReference() throws {
        let embedder = try #require(Self.embedder).quantized()
        #expect(embedder.encoder.precision == .int8)
        let results = embedder.embed(MiniLMFixtures.sentences.map(\.text), batchSize: 32)
        for (result, sentence) in zip(results, MiniLMFixtures.sentences) {
            let cosine = SentenceEmbedder.cosine(result.vector, sentence.embedding)
            #expect(cosine >= 0.997, "cosine \(cosine) for \(sentence.text.prefix(40))")
        }
    }

    @Test func attentionProbabilitiesMatchWithinTolerance() throws {
        let embedder = try #require(Self.embedder)
        let withAttention = MiniLMFixtures.sentences.filter { $0.attentionFile != nil }
        let batch = withAttention.map { $0.ids.map(Int32.init) }
        let layers = Set(0..<embedder.encoder.configuration.layers)
        let (_, captured) = embedder.encoder.forward(batch, capture: CaptureRequest(attentionLayers: layers))
        var worst: Float = 0
        for (b, sentence) in withAttention.enumerated() {
            let reference = try MiniLMFixtures.attention(sentence)
            let t = sentence.ids.count
            let heads = embedder.encoder.configuration.heads
            for layer in layers.sorted() {
                let ours = try #require(captured.attention[layer]?[b])
                #expect(ours.shape == [heads, t, t])
                let base = layer * heads * t * t
                for i in 0..<(heads * t * t) { worst = max(worst, abs(ours.storage[i] - reference[base + i])) }
            }
        }
        #expect(worst <= 1e-4, "max |diff| \(worst)")
    }

    /// The neuron view's q and k are the vectors the attention came from: softmax(q·k/√d) over
    /// each row gives back the captured probabilities, for every head of every layer, in a
    /// padded batch of two lengths.
    @Test func capturedQueriesAndKeysReproduceTheAttention() throws {
        let embedder = try #require(Self.embedder)
        let configuration = embedder.encoder.configuration
        let batch = [MiniLMFixtures.sentences[0].ids, MiniLMFixtures.sentences[1].ids].map { $0.map(Int32.init) }
        let layers = Set(0..<configuration.layers)
        let (_, captured) = embedder.encoder.forward(
            batch, capture: CaptureRequest(attentionLayers: layers, queryKeyLayers: layers))
        let d = configuration.headSize
        let hidden = configuration.hiddenSize
        var worst: Float = 0
        for (b, ids) in batch.enumerated() {
            let t = ids.count
            for layer in layers {
                let q = try #require(captured.queries[layer]?[b])
                let k = try #require(captured.keys[layer]?[b])
                let attention = try #require(captured.attention[layer]?[b])
                #expect(q.shape == [t, hidden] && k.shape == [t, hidden])
                for head in 0..<configuration.heads {
                    for i in 0..<t {
                        let scores = (0..<t).map { j in
                            (0..<d).reduce(Float(0)) { sum, c in
                                sum + q.storage[i * hidden + head * d + c] * k.storage[j * hidden + head * d + c]
                            } / Float(d).squareRoot()
                        }
                        let top = scores.max()!
                        let exps = scores.map { Foundation.exp($0 - top) }
                        let total = exps.reduce(0, +)
                        for j in 0..<t {
                            let expected = attention.storage[(head * t + i) * t + j]
                            worst = max(worst, abs(exps[j] / total - expected))
                        }
                    }
                }
            }
        }
        #expect(worst <= 1e-5, "max |softmax(q·k/√d) − attention| \(worst)")
    }

    @Test(arguments: MiniLMFixtures.pairs.indices)
    func sentencePairsMatchIdsTypesEmbeddingsAndAttention(index: Int) throws {
        let embedder = try #require(Self.embedder)
        let pair = MiniLMFixtures.pairs[index]
        let (ids, types) = embedder.tokenizer.encodePair(pair.first, pair.second)
        #expect(ids.map(Int.init) == pair.ids)
        #expect(types.map(Int.init) == pair.typeIDs)
        let layers = Set(0..<embedder.encoder.configuration.layers)
        let (hidden, captured) = embedder.encoder.forward(
            [ids], types: [types], capture: CaptureRequest(attentionLayers: layers))
        let embedding = SentenceEmbedder.meanPool(hidden, lengths: [ids.count])[0]
        #expect((zip(embedding, pair.embedding).map { abs($0 - $1) }.max() ?? 1) <= 1e-4)
        let reference = try MiniLMFixtures.attention(file: pair.attentionFile)
        let ours = layers.sorted().flatMap { captured.attention[$0]?[0].storage ?? [] }
        #expect(ours.count == reference.count)
        #expect((zip(ours, reference).map { abs($0 - $1) }.max() ?? 1) <= 1e-4)
    }

    @Test func pairTruncationTakesFromTheLongerSideFirst() throws {
        let embedder = try #require(Self.embedder)
        let long = Array(repeating: "wing", count: 400).joined(separator: " ")
        let (ids, types) = embedder.tokenizer.encodePair("short question", long)
        #expect(ids.count == embedder.tokenizer.maxTokens)
        #expect(types.filter { $0 == 0 }.count == 4)  // [CLS] short question [SEP]
    }

    @Test func layerZeroHeadTwoIsAPreviousTokenHead() throws {
        let embedder = try #require(Self.embedder)
        let ids = embedder.tokenizer.encode("The quick brown fox jumps over the lazy dog.")
        let (_, captured) = embedder.encoder.forward([ids], capture: CaptureRequest(attentionLayers: [0]))
        let head = try #require(captured.attention[0]?[0])
        let t = ids.count
        for query in 1..<t { #expect(head.storage[2 * t * t + query * t + query - 1] > 0.9) }
    }

    @Test func residualCaptureKeepsOnlyTheAskedLayer() throws {
        let embedder = try #require(Self.embedder)
        let ids = embedder.tokenizer.encode("residual stream")
        let (hidden, captured) = embedder.encoder.forward([ids], capture: CaptureRequest(residualLayers: [5]))
        #expect(captured.attention.isEmpty)
        #expect(Array(captured.residual.keys) == [5])
        #expect(captured.residual[5]?[0].storage == Array(hidden.storage[0..<(ids.count * 384)]))
    }

    @Test func similarSentencesAreCloser() throws {
        let embedder = try #require(Self.embedder)
        let vectors = embedder.embed([
            "A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
        ]).map(\.vector)
        #expect(SentenceEmbedder.cosine(vectors[0], vectors[1]) > SentenceEmbedder.cosine(vectors[0], vectors[2]))
    }
}

/// The committed reference fixtures.
enum MiniLMFixtures {
    struct Sentence: Decodable {
        var text: String
        var ids: [Int]
        var tokens: [String]
        var embedding: [Float]
        var attentionFile: String?
        var attentionShape: [Int]?

        enum CodingKeys: String, CodingKey {
            case text, ids, tokens, embedding
            case attentionFile = "attention_file"
            case attentionShape = "attention_shape"
        }
    }

    struct Pair: Decodable {
        var first: String
        var second: String
        var ids: [Int]
        var typeIDs: [Int]
        var embedding: [Float]
        var attentionFile: String

        enum CodingKeys: String, CodingKey {
            case first, second, ids, embedding
            case typeIDs = "type_ids"
            case attentionFile = "attention_file"
        }
    }

    struct Reference: Decodable {
        var sentences: [Sentence]
        var pairs: [Pair]
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/minilm")

    static let reference: Reference? = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("reference.json")) else { return nil }
        return try? JSONDecoder().decode(Reference.self, from: data)
    }()

    static let sentences: [Sentence] = reference?.sentences ?? []
    static let pairs: [Pair] = reference?.pairs ?? []

    static func attention(_ sentence: Sentence) throws -> [Float] {
        try attention(file: sentence.attentionFile ?? "")
    }

    static func attention(file: String) throws -> [Float] {
        let data = try Data(contentsOf: directory.appendingPathComponent(file))
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 4)).map {
                Float(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self).littleEndian)
            }
        }
    }

    /// `$LOUPE_MODELS/all-MiniLM-L6-v2` or `~/.cache/loupe/models/all-MiniLM-L6-v2`, when it holds the model.
    static let modelDirectory: String? = {
        let environment = ProcessInfo.processInfo.environment
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
        let directory = root + "/all-MiniLM-L6-v2"
        return FileManager.default.fileExists(atPath: directory + "/model.safetensors") ? directory : nil
    }()
}
