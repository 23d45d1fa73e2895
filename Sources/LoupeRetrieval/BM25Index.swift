import Foundation

/// Okapi BM25 over an inverted index, with Lucene's idf (the bm25s default):
/// score(q, d) = Σ_t∈q idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl)),
/// idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)); a term repeated in the query counts each time.
package struct BM25Index: Sendable {
    package struct Parameters: Hashable, Sendable, Codable {
        package var k1: Double
        package var b: Double

        package init(k1: Double = 1.2, b: Double = 0.75) {
            self.k1 = k1
            self.b = b
        }
    }

    /// One term's part of a document's score: idf × the saturated tf part.
    package struct Contribution: Hashable, Sendable, Codable {
        package var term: String
        package var termFrequency: Int
        package var idf: Double
        package var tfPart: Double
        package var score: Double { idf * tfPart }

        package init(term: String, termFrequency: Int, idf: Double, tfPart: Double) {
            self.term = term
            self.termFrequency = termFrequency
            self.idf = idf
            self.tfPart = tfPart
        }
    }

    package private(set) var parameters: Parameters
    /// Term → its postings: (document, term frequency), by document.
    package private(set) var postings: [String: [(document: Int32, frequency: Int32)]]
    package private(set) var lengths: [Int32]
    /// The length normalisation of every document under `parameters`, computed once.
    private var defaultNorms: [Double] = []

    package var documentCount: Int { lengths.count }
    package var averageLength: Double {
        lengths.isEmpty ? 0 : Double(lengths.reduce(0) { $0 + Int($1) }) / Double(lengths.count)
    }

    /// Indexes documents given as their terms.
    package init(documents: [[String]], parameters: Parameters = Parameters()) {
        self.parameters = parameters
        var postings: [String: [(document: Int32, frequency: Int32)]] = [:]
        var lengths: [Int32] = []
        lengths.reserveCapacity(documents.count)
        for (index, terms) in documents.enumerated() {
            lengths.append(Int32(terms.count))
            var counts: [String: Int32] = [:]
            for term in terms { counts[term, default: 0] += 1 }
            for (term, count) in counts { postings[term, default: []].append((Int32(index), count)) }
        }
        self.postings = postings
        self.lengths = lengths
        self.defaultNorms = norms(parameters)
    }

    package func idf(_ term: String) -> Double {
        let df = Double(postings[term]?.count ?? 0)
        return log(1 + (Double(documentCount) - df + 0.5) / (df + 0.5))
    }

    init(postings: [String: [(document: Int32, frequency: Int32)]], lengths: [Int32], parameters: Parameters) {
        self.postings = postings
        self.lengths = lengths
        self.parameters = parameters
        self.defaultNorms = norms(parameters)
    }

    /// k1 · (1 − b + b · |d| / avgdl) for every document.
    private func norms(_ p: Parameters) -> [Double] {
        let average = averageLength
        return lengths.map { p.k1 * (1 - p.b + p.b * Double($0) / average) }
    }

    /// Every document's score for `query` (0 where no term matches), one pass per query term.
    package func scores(_ query: [String], parameters: Parameters? = nil) -> [Double] {
        let p = parameters ?? self.parameters
        var scores = [Double](repeating: 0, count: documentCount)
        let n = Double(documentCount)
        let norms = p == self.parameters ? defaultNorms : self.norms(p)
        scores.withUnsafeMutableBufferPointer { scores in
            norms.withUnsafeBufferPointer { norms in
                for term in query {
                    guard let list = postings[term] else { continue }
                    let df = Double(list.count)
                    let weight = log(1 + (n - df + 0.5) / (df + 0.5))
                    list.withUnsafeBufferPointer { list in
                        for posting in list {
                            let tf = Double(posting.frequency)
                            let document = Int(posting.document)
                            scores[document] += weight * tf / (tf + norms[document])
                        }
                    }
                }
            }
        }
        return scores
    }

    /// The `k` best documents with a score above 0, best first (ties: lower document first).
    package func search(_ query: [String], k: Int, parameters: Parameters? = nil) -> [(document: Int, score: Double)] {
        let all = scores(query, parameters: parameters)
        return TopK.select(all, k: k)
    }

    /// How each query term contributed to `document`'s score.
    package func explain(_ query: [String], document: Int, parameters: Parameters? = nil) -> [Contribution] {
        let p = parameters ?? self.parameters
        let norm = p.k1 * (1 - p.b + p.b * Double(lengths[document]) / averageLength)
        var seen: [String: Int] = [:]
        for term in query { seen[term, default: 0] += 1 }
        return query.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.compactMap { term in
            // Postings are in document order: binary search.
            guard let list = postings[term] else { return nil }
            var low = 0
            var high = list.count
            while low < high {
                let middle = (low + high) / 2
                if list[middle].document < document { low = middle + 1 } else { high = middle }
            }
            guard low < list.count, list[low].document == document else { return nil }
            let posting = list[low]
            let tf = Double(posting.frequency)
            // A term repeated in the query counts each time.
            return Contribution(
                term: term, termFrequency: Int(posting.frequency), idf: idf(term) * Double(seen[term]!),
                tfPart: tf / (tf + norm))
        }
    }
}

/// Top-k selection over a dense score array.
package enum TopK {
    /// Indices of the `k` largest positive scores, best first; equal scores keep index order.
    /// The k-th largest score is found by quickselect on a copy of the positive scores (O(n)),
    /// then only the documents at or above it are sorted.
    package static func select(_ scores: [Double], k: Int) -> [(document: Int, score: Double)] {
        guard k > 0 else { return [] }
        var positive: [Double] = []
        positive.reserveCapacity(scores.count)
        for score in scores where score > 0 { positive.append(score) }
        var threshold = 0.0
        var equalAllowed = Int.max
        if positive.count > k {
            threshold = kthLargest(&positive, k)
            // How many documents scoring exactly the threshold fit after the ones above it.
            let above = positive.reduce(0) { $0 + ($1 > threshold ? 1 : 0) }
            equalAllowed = k - above
        }
        var kept: [(document: Int, score: Double)] = []
        kept.reserveCapacity(min(k, positive.count))
        scores.withUnsafeBufferPointer { scores in
            for document in 0..<scores.count {
                let score = scores[document]
                guard score > 0, score >= threshold else { continue }
                if score == threshold && positive.count > k {
                    guard equalAllowed > 0 else { continue }
                    equalAllowed -= 1
                }
                kept.append((document, score))
            }
        }
        return kept.sorted { $0.score != $1.score ? $0.score > $1.score : $0.document < $1.document }
    }

    /// The k-th largest value (1-based) of `values`, which it reorders (Hoare quickselect,
    /// median-of-three pivots).
    private static func kthLargest(_ values: inout [Double], _ k: Int) -> Double {
        values.withUnsafeMutableBufferPointer { v in
            var low = 0
            var high = v.count - 1
            let target = k - 1  // index in descending order
            while low < high {
                let middle = low + (high - low) / 2
                let pivot = max(min(v[low], v[middle]), min(max(v[low], v[middle]), v[high]))
                var i = low
                var j = high
                while i <= j {
                    while v[i] > pivot { i += 1 }
                    while v[j] < pivot { j -= 1 }
                    if i <= j {
                        v.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if target <= j {
                    high = j
                } else if target >= i {
                    low = i
                } else {
                    return v[target]
                }
            }
            return v[target]
        }
    }
}
