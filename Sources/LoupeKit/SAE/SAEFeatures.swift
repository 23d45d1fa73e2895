import Foundation
import LoupeBase
import LoupeModels
import LoupeRetrieval
import LoupeStore
import LoupeTensor

/// What the feature browser shows: every latent's density and largest activation over the SAE's
/// activation set, and for one latent its card — top contexts by activation quantile, the
/// histogram, the vocabulary tokens its decoder direction is closest to, its nearest features.
package struct SAEFeatureIndex: Sendable {
    package struct Summary: Hashable, Sendable, Codable {
        package var feature: Int
        /// Fraction of tokens it fires on.
        package var density: Double
        package var maxActivation: Float
        package var label: String?
        /// The tokens of its strongest firings, distinct, strongest first (the list's preview).
        package var topTokens: [String]?
    }

    package struct Context: Hashable, Sendable, Codable {
        package var row: Int
        package var activation: Float
        /// The chunk the tokens come from.
        package var chunk: Int64
        /// The tokens around the firing one, with this feature's activation on each.
        package var tokens: [String]
        package var activations: [Float]
        /// Index of the firing token in `tokens`.
        package var center: Int
    }

    package struct Card: Hashable, Sendable, Codable {
        package var model: Int64
        package var feature: Int
        package var label: String?
        package var density: Double
        package var maxActivation: Float
        /// Contexts grouped by quantile of the feature's nonzero activations (top first).
        package var groups: [Group]
        /// Counts of nonzero activations in 10 equal bins from 0 to the maximum.
        package var histogram: [Int]
        /// Tokens whose MiniLM word embedding is nearest (cosine) to the decoder direction.
        package var vocabulary: [Neighbor]
        /// Features whose decoder directions are nearest (cosine).
        package var neighbors: [Neighbor]
        /// The model whose stream the SAE reads (nil on cards from before this was recorded).
        package var source: String?
        /// A language model's SAE: the tokens whose logits the decoder direction raises most and
        /// lowers most, read through the final RMSNorm and the unembedding (the logit lens of the
        /// direction; scores are the logits of the direction normalised to RMS 1).
        package var promotes: [Neighbor]?
        package var suppresses: [Neighbor]?
    }

    package struct Group: Hashable, Sendable, Codable {
        package var name: String
        package var contexts: [Context]
    }

    package struct Neighbor: Hashable, Sendable, Codable {
        package var name: String
        package var cosine: Float
    }

    package let model: Int64
    package let sae: SparseAutoencoder
    /// The layer the SAE reads (MiniLM's or SmolLM2's: see ``source``).
    package let layer: Int
    /// The model whose residual stream the SAE reads (its activation set's).
    package let source: String
    /// The training step the SAE had reached when the index was built.
    package let step: Int
    package var summaries: [Summary]
    /// Per feature, the rows it fires on (ascending) with their activations.
    let firings: [[Firing]]
    let rows: Int
    let set: Int64

    typealias Firing = (row: Int, activation: Float)

    /// The index of SAE `id` at its current step: the one stored with it when there is one
    /// (`sae train` stores it when it ends), otherwise every row of its activation set encoded
    /// once, with progress on `reporter`, and stored for next time.
    ///
    /// - Throws: ``JobCancelled`` when `reporter` is cancelled while it encodes.
    package init(model id: Int64, database: any SQLDatabase, reporter: JobReporter = .detached()) throws {
        // Reading stored activations and checkpoints needs no model weights.
        let service = SAEService(database: database, models: ModelLibrary(root: ""))
        let tables = SAETables(database)
        let (record, trainer) = try service.stored(id)
        let sae = trainer.sae
        let setRecord = try tables.activationSets().first { $0.id == record.setID }
        var rows = setRecord?.rows ?? 0
        let firings: [[Firing]]
        if let stored = try tables.saeFeatureIndex(model: id), stored.step == record.step,
            let decoded = Self.decode(stored.data, width: sae.width, rows: rows)
        {
            firings = decoded
        } else {
            // The row count is the one of the rows encoded, read with them.
            (firings, rows) = try Self.encode(set: record.setID, sae: sae, service: service, reporter: reporter)
            // The index is a cache: a workspace this process may only read still gets its features.
            try? tables.storeSAEFeatureIndex(model: id, step: record.step, data: Self.serialize(firings, rows: rows))
        }
        let labels = try tables.saeFeatureLabels(model: id)
        // Each feature's strongest firings, their tokens read in one query.
        // (TopK keeps equal activations in row order, as the card's top contexts are.)
        let strongest = firings.map { fired in
            TopK.select(fired.map { Double($0.activation) }, k: 8).map { fired[$0.document] }
        }
        let tokens = Dictionary(
            try tables.activationTokens(set: record.setID, rows: Array(Set(strongest.joined().map(\.row))))
                .map { ($0.row, $0.token) }, uniquingKeysWith: { first, _ in first })
        summaries = firings.enumerated().map { j, fired in
            var seen = Set<String>()
            let top = strongest[j].compactMap { tokens[$0.row] }.filter { seen.insert($0).inserted }.prefix(3)
            return Summary(
                feature: j, density: Double(fired.count) / Double(max(1, rows)),
                maxActivation: fired.map(\.activation).max() ?? 0, label: labels[j], topTokens: Array(top))
        }
        self.model = id
        self.sae = sae
        source = setRecord?.model ?? ModelLibrary.miniLMName
        layer = record.layer
        step = record.step
        self.firings = firings
        self.rows = rows
        set = record.setID
    }

    /// Encodes every row of activation set `set` with `sae`: per feature, the rows it fires on.
    static func encode(set: Int64, sae: SparseAutoencoder, service: SAEService, reporter: JobReporter) throws
        -> (firings: [[Firing]], rows: Int)
    {
        let (rows, _, values) = try service.activations(set: set)
        var firings = [[Firing]](repeating: [], count: sae.width)
        try sae.forEachBatch(of: values, rows: rows) { start, _, f in
            try reporter.checkCancellation()
            for r in 0..<f.rows {
                for j in 0..<sae.width where f.codes[r * sae.width + j] > 0 {
                    firings[j].append((start + r, f.codes[r * sae.width + j]))
                }
            }
            reporter.report(
                JobProgress(
                    completed: Double(start + f.rows), total: Double(rows),
                    detail: "encoding \(rows) tokens to index the SAE's features"))
        }
        return (firings, rows)
    }

    /// The stored form: `LFI1`, the width and row count, each feature's firing count, then every
    /// firing's row as the gap from the feature's previous one and every activation, all
    /// little-endian 32-bit, in one zstd frame (the gaps are small, so it packs well).
    static func serialize(_ firings: [[Firing]], rows: Int) -> Data {
        var words: [UInt32] = [0x3149_464C, UInt32(firings.count), UInt32(rows)]
        words += firings.map { UInt32($0.count) }
        for fired in firings {
            var previous = 0
            for firing in fired {
                words.append(UInt32(firing.row - previous))
                previous = firing.row
            }
        }
        for fired in firings { words += fired.map { $0.activation.bitPattern } }
        return Zstd.compress(words.withUnsafeBytes { Data($0) })
    }

    /// The firings `serialize` stored, or nil when the data is damaged or was made for another
    /// width or row count (the index is then rebuilt).
    static func decode(_ data: Data, width: Int, rows: Int) -> [[Firing]]? {
        guard let raw = Zstd.decompress(data), raw.count % 4 == 0 else { return nil }
        let words = raw.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
        guard words.count >= 3 + width, words[0] == 0x3149_464C, words[1] == UInt32(width), words[2] == UInt32(rows)
        else { return nil }
        let counts = words[3..<(3 + width)].map(Int.init)
        let total = counts.reduce(0, +)
        guard words.count == 3 + width + 2 * total else { return nil }
        var firings = [[Firing]]()
        firings.reserveCapacity(width)
        var gap = 3 + width
        var activation = gap + total
        for count in counts {
            var fired = [Firing]()
            fired.reserveCapacity(count)
            var row = 0
            for _ in 0..<count {
                row += Int(words[gap])
                guard row < rows else { return nil }
                fired.append((row, Float(bitPattern: words[activation])))
                gap += 1
                activation += 1
            }
            firings.append(fired)
        }
        return firings
    }

    /// The card of `feature` with the weights its source model offers: MiniLM's word embeddings
    /// for a MiniLM SAE, SmolLM2's final norm and unembedding for a SmolLM2 one (each left out
    /// when the weights are not there), `perGroup` contexts per quantile group.
    package func card(_ feature: Int, database: any SQLDatabase, models: ModelLibrary, perGroup: Int = 5) throws
        -> Card
    {
        if source == SAEService.languageModelName {
            return try card(
                feature, database: database, embedder: nil, languageModel: try? models.smolLM2(), perGroup: perGroup)
        }
        return try card(feature, database: database, embedder: try? models.miniLM(), perGroup: perGroup)
    }

    /// The card of `feature`; contexts are ±`window` tokens of the same chunk.
    package func card(
        _ feature: Int, database: any SQLDatabase, embedder: SentenceEmbedder?, languageModel: Generator? = nil,
        perGroup: Int = 5, window: Int = 8
    ) throws -> Card {
        guard (0..<sae.width).contains(feature) else {
            throw SAEError("feature \(feature): SAE \(model) has features 0…\(sae.width - 1)")
        }
        let fired = firings[feature].sorted { ($0.activation, -$0.row) > ($1.activation, -$1.row) }
        let maximum = fired.first?.activation ?? 0
        var histogram = [Int](repeating: 0, count: 10)
        for firing in fired where maximum > 0 {
            histogram[min(9, Int(firing.activation / maximum * 10))] += 1
        }
        // Top, then the upper-middle and lower quantile bands of the nonzero activations.
        var groups: [Group] = []
        let bands: [(String, Double, Double)] = [
            ("top", 0, 0), ("quantile 0.75–0.9", 0.1, 0.25), ("quantile 0.5–0.75", 0.25, 0.5),
            ("quantile 0–0.5", 0.5, 1),
        ]
        for (name, from, to) in bands {
            let lower = Int(Double(fired.count) * from)
            let upper = name == "top" ? min(fired.count, perGroup) : Int(Double(fired.count) * to)
            guard lower < upper else { continue }
            let picked = stride(from: lower, to: upper, by: max(1, (upper - lower) / perGroup)).prefix(perGroup)
            let contexts = try picked.map {
                try context(fired[$0], feature: feature, tables: SAETables(database), window: window)
            }
            groups.append(Group(name: name, contexts: contexts))
        }
        // The decoder direction against the word-embedding matrix and the other features.
        let direction = Array(sae.decoder[(feature * sae.inputs)..<((feature + 1) * sae.inputs)])
        var vocabulary: [Neighbor] = []
        if let embedder, embedder.encoder.tokenEmbeddings.shape[1] == sae.inputs {
            let table = embedder.encoder.tokenEmbeddings
            let size = table.shape[0]
            let norm = direction.reduce(0) { $0 + $1 * $1 }.squareRoot()
            let inputs = sae.inputs
            let cosines = table.storage.withUnsafeBufferPointer { rows in
                (0..<size).map { token -> (Int, Float) in
                    let row = rows.baseAddress! + token * inputs
                    var length: Float = 0
                    for d in 0..<inputs { length += row[d] * row[d] }
                    return (token, Self.dot(row, direction, inputs) / max(norm * length.squareRoot(), 1e-12))
                }
            }
            let nearest = cosines.sorted { $0.1 > $1.1 }.prefix(10)
            let names = embedder.tokenizer.tokens(nearest.map { Int32($0.0) })
            vocabulary = zip(names, nearest).map { Neighbor(name: $0, cosine: $1.1) }
        }
        // Every decoder row against this one.
        let norms = sae.decoderNorms()
        let similar = sae.decoder.withUnsafeBufferPointer { rows in
            (0..<sae.width).filter { $0 != feature }.map { other in
                (
                    other,
                    Self.dot(rows.baseAddress! + other * sae.inputs, direction, sae.inputs)
                        / max(norms[other] * norms[feature], 1e-12)
                )
            }
        }
        let neighbors = similar.sorted { $0.1 > $1.1 }.prefix(5).map {
            Neighbor(name: "feature \($0.0)" + (summaries[$0.0].label.map { " (\($0))" } ?? ""), cosine: $0.1)
        }
        var card = Card(
            model: model, feature: feature, label: summaries[feature].label, density: summaries[feature].density,
            maxActivation: maximum, groups: groups, histogram: histogram, vocabulary: vocabulary,
            neighbors: Array(neighbors), source: source)
        if let languageModel, languageModel.model.configuration.width == sae.inputs {
            let logits = languageModel.model.lensLogits(direction).storage
            let order = logits.indices.sorted { (logits[$0], -$0) > (logits[$1], -$1) }
            func named(_ ids: [Int]) -> [Neighbor] {
                ids.map { Neighbor(name: languageModel.tokenizer.piece(Int32($0)), cosine: logits[$0]) }
            }
            card.promotes = named(Array(order.prefix(10)))
            card.suppresses = named(Array(order.suffix(10).reversed()))
        }
        return card
    }

    /// `row · direction` by one kernel whatever the process: a product over all rows at once
    /// (sgemm with one column) sums each row in an order that depends on how OpenBLAS splits the
    /// rows among its threads, so the MCP server's card and the CLI's differed in the last bit.
    private static func dot(_ row: UnsafePointer<Float>, _ direction: [Float], _ count: Int) -> Float {
        direction.withUnsafeBufferPointer { CPUKernels.dot(row, $0.baseAddress!, count: count) }
    }

    /// A firing row with its neighbours in the same chunk and their activations of `feature`.
    func context(_ firing: (row: Int, activation: Float), feature: Int, tables: SAETables, window: Int) throws
        -> Context
    {
        let candidates = Array(max(0, firing.row - window)...min(rows - 1, firing.row + window))
        let places = try tables.activationTokens(set: set, rows: candidates).sorted { $0.row < $1.row }
        guard let center = places.first(where: { $0.row == firing.row }) else {
            return Context(
                row: firing.row, activation: firing.activation, chunk: 0, tokens: [], activations: [], center: 0)
        }
        let sameChunk = places.filter { $0.chunkID == center.chunkID }
        let first = sameChunk.first?.row ?? firing.row
        let values = try SAEService.activationRows(
            first..<((sameChunk.last?.row ?? firing.row) + 1), set: set, dimensions: sae.inputs, tables: tables)
        var x = [Float]()
        for place in sameChunk {
            let offset = (place.row - first) * sae.inputs
            x += values[offset..<(offset + sae.inputs)].map { $0 * sae.inputScale }
        }
        let codes = sae.forward(x, rows: sameChunk.count).codes
        return Context(
            row: firing.row, activation: firing.activation, chunk: center.chunkID, tokens: sameChunk.map(\.token),
            activations: sameChunk.indices.map { codes[$0 * sae.width + feature] },
            center: sameChunk.firstIndex { $0.row == firing.row } ?? 0)
    }
}

/// An SAE run live on a text: MiniLM up to the SAE's layer, then the SAE on every token.
package struct SAETextActivations: Hashable, Sendable, Codable {
    package var tokens: [String]
    /// Per token: its active features, largest first.
    package var features: [[FeatureActivation]]
    /// Whether each token carries its own spaces (SmolLM2's byte-level pieces, " wing") rather
    /// than being a word or word piece that text joins with one (MiniLM's WordPiece): how the
    /// tokens make the text again.
    package var piecesCarrySpaces = false

    enum CodingKeys: String, CodingKey { case tokens, features }

    /// The tokens as one text, each through `mark` (the token and its index): SmolLM2's pieces
    /// side by side, MiniLM's word pieces with a space between.
    package func joined(_ mark: (String, Int) -> String) -> String {
        tokens.enumerated().map { mark($0.element, $0.offset) }.joined(separator: piecesCarrySpaces ? "" : " ")
    }

    package struct FeatureActivation: Hashable, Sendable, Codable {
        package var feature: Int
        package var activation: Float
    }

    /// The activation of `feature` on each token (0 where it does not fire).
    package func activations(of feature: Int) -> [Float] {
        features.map { $0.first { $0.feature == feature }?.activation ?? 0 }
    }

    package init(text: String, model id: Int64, database: any SQLDatabase, embedder: SentenceEmbedder) throws {
        let (record, trainer) = try SAEService(database: database, models: ModelLibrary(root: "")).stored(id)
        try self.init(text: text, sae: trainer.sae, layer: record.layer, embedder: embedder)
    }

    /// `sae` on the residual stream after `layer` of MiniLM's forward pass over `text`.
    package init(text: String, sae: SparseAutoencoder, layer: Int, embedder: SentenceEmbedder) throws {
        guard embedder.encoder.configuration.hiddenSize == sae.inputs else {
            throw SAEError(
                "the SAE reads a stream of \(sae.inputs) values, not MiniLM's \(embedder.encoder.configuration.hiddenSize)"
            )
        }
        let ids = embedder.tokenizer.encode(text)
        let (_, captured) = embedder.encoder.forward([ids], capture: CaptureRequest(residualLayers: [layer]))
        guard let states = captured.residual[layer]?.first, ids.count > 2 else {
            throw SAEError("the text has no tokens")
        }
        let rows = ids.count - 2
        let x = (0..<(rows * sae.inputs)).map { states.storage[sae.inputs + $0] * sae.inputScale }
        let codes = sae.forward(x, rows: rows).codes
        tokens = Array(embedder.tokenizer.tokens(ids)[1..<(ids.count - 1)])
        features = (0..<rows).map { r in
            (0..<sae.width).compactMap { j in
                codes[r * sae.width + j] > 0 ? FeatureActivation(feature: j, activation: codes[r * sae.width + j]) : nil
            }.sorted { $0.activation > $1.activation }
        }
    }
}
