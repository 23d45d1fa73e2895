import Foundation
import LoupeBase
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor
import Synchronization

/// The quality of a trained SAE on its activation set, with SAELens's names.
package struct SAEMetrics: Codable, Hashable, Sendable {
    package var tokens: Int
    package var l0: Double
    /// Mean over tokens of ‖x − x̂‖² / d (per element, on the scaled inputs).
    package var mse: Double
    package var explainedVariance: Double
    package var fvu: Double
    /// Mean cosine between x and x̂.
    package var cosine: Double
    /// Mean ‖x̂‖ / ‖x‖.
    package var l2Ratio: Double
    /// Latents that never fired on these tokens, and those firing on more than 10% of them.
    package var deadFraction: Double
    package var denseFraction: Double
    /// Histogram of log10(firing frequency) of the live latents: bins of 0.5 from −7 to 0.
    package var densityHistogram: [Int]
    /// Mean cosine of MiniLM's sentence embeddings with the reconstruction spliced in vs clean.
    package var embeddingFidelity: Double?
    /// SmolLM2's next-token loss with the reconstruction spliced in, against clean and zeroed.
    package var languageModelFidelity: LanguageModelFidelity?

    /// The metrics kept in SAE `id`'s `metrics_json`, as `sae train` wrote them; a value that does
    /// not read back is a ``StoredValueError`` naming the SAE, never an SAE without metrics.
    package static func stored(_ json: String, sae id: Int64) throws(StoredValueError) -> SAEMetrics {
        try JSONDecoder().decode(SAEMetrics.self, stored: json, "metrics", row: "SAE \(id)", column: "metrics_json")
    }

    static func measure(_ sae: SparseAutoencoder, values: [Float], rows: Int, dimensions: Int) -> SAEMetrics {
        var fired = [Int](repeating: 0, count: sae.width)
        var active = 0
        var squared = 0.0
        var cosineSum = 0.0
        var ratioSum = 0.0
        var total = 0.0
        var mean = [Double](repeating: 0, count: dimensions)
        for r in 0..<rows { for d in 0..<dimensions { mean[d] += Double(values[r * dimensions + d] * sae.inputScale) } }
        for d in 0..<dimensions { mean[d] /= Double(rows) }
        sae.forEachBatch(of: values, rows: rows) { _, x, f in
            for r in 0..<f.rows {
                var dot = 0.0
                var nx = 0.0
                var nr = 0.0
                for d in 0..<dimensions {
                    let a = Double(x[r * dimensions + d])
                    let b = Double(f.reconstruction[r * dimensions + d])
                    squared += (a - b) * (a - b)
                    total += (a - mean[d]) * (a - mean[d])
                    dot += a * b
                    nx += a * a
                    nr += b * b
                }
                cosineSum += nx > 0 && nr > 0 ? dot / (nx.squareRoot() * nr.squareRoot()) : 0
                ratioSum += nx > 0 ? (nr / nx).squareRoot() : 0
                for j in 0..<sae.width where f.codes[r * sae.width + j] > 0 {
                    fired[j] += 1
                    active += 1
                }
            }
        }
        var histogram = [Int](repeating: 0, count: 14)
        for count in fired where count > 0 {
            let log = log10(Double(count) / Double(rows))
            histogram[min(13, max(0, Int(((log + 7) * 2).rounded(.down))))] += 1
        }
        let fvu = total > 0 ? squared / total : 0
        return SAEMetrics(
            tokens: rows, l0: Double(active) / Double(rows), mse: squared / Double(rows * dimensions),
            explainedVariance: 1 - fvu, fvu: fvu, cosine: cosineSum / Double(rows), l2Ratio: ratioSum / Double(rows),
            deadFraction: Double(fired.filter { $0 == 0 }.count) / Double(sae.width),
            denseFraction: Double(fired.filter { Double($0) > 0.1 * Double(rows) }.count) / Double(sae.width),
            densityHistogram: histogram)
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
