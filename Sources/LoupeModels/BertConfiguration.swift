import Foundation
import LoupeBase

/// The hyper-parameters of a BERT encoder, read from its `config.json`.
package struct BertConfiguration: Hashable, Sendable {
    package var vocabularySize: Int
    package var hiddenSize: Int
    package var layers: Int
    package var heads: Int
    package var intermediateSize: Int
    package var maxPositions: Int
    package var typeVocabularySize: Int
    package var layerNormEpsilon: Float

    package var headSize: Int { hiddenSize / heads }

    /// all-MiniLM-L6-v2's configuration.
    package static let miniLM = BertConfiguration(
        vocabularySize: 30522, hiddenSize: 384, layers: 6, heads: 12, intermediateSize: 1536, maxPositions: 512,
        typeVocabularySize: 2, layerNormEpsilon: 1e-12
    )

    /// Reads `config.json`; every field must be present and the activation must be BERT's gelu.
    package init(file path: String) throws(ModelError) {
        let name = (path as NSString).lastPathComponent
        let data: Data
        do {
            data = Data(try TextFile.bytes(path, limitBytes: 1 << 20))
        } catch {
            throw ModelError(reading: error)
        }
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ModelError(file: name, message: "is not a JSON object")
        }
        func integer(_ key: String) throws(ModelError) -> Int {
            // `as? Int` bridges only an exact integer (`intValue` truncates 2.5 and traps on
            // 1e300); the bound keeps products of sizes far from overflow.
            guard let value = json[key] as? Int, value > 0, value <= 1 << 24 else {
                throw ModelError(
                    file: name,
                    message: "needs \(key) to be an integer from 1 to \(1 << 24), found \(json[key] ?? "nothing")")
            }
            return value
        }
        if let activation = json["hidden_act"] as? String, activation != "gelu" {
            throw ModelError(file: name, message: "hidden_act is \(activation); Loupe's encoder implements BERT's gelu")
        }
        self.init(
            vocabularySize: try integer("vocab_size"), hiddenSize: try integer("hidden_size"),
            layers: try integer("num_hidden_layers"), heads: try integer("num_attention_heads"),
            intermediateSize: try integer("intermediate_size"), maxPositions: try integer("max_position_embeddings"),
            typeVocabularySize: try integer("type_vocab_size"),
            layerNormEpsilon: (json["layer_norm_eps"] as? NSNumber)?.floatValue ?? 1e-12
        )
        guard hiddenSize % heads == 0 else {
            throw ModelError(file: name, message: "hidden_size \(hiddenSize) is not a multiple of \(heads) heads")
        }
    }

    package init(
        vocabularySize: Int, hiddenSize: Int, layers: Int, heads: Int, intermediateSize: Int, maxPositions: Int,
        typeVocabularySize: Int, layerNormEpsilon: Float
    ) {
        self.vocabularySize = vocabularySize
        self.hiddenSize = hiddenSize
        self.layers = layers
        self.heads = heads
        self.intermediateSize = intermediateSize
        self.maxPositions = maxPositions
        self.typeVocabularySize = typeVocabularySize
        self.layerNormEpsilon = layerNormEpsilon
    }
}
