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
    }

    package func idf(_ term: String) -> Double {
        let df = Double(postings[term]?.count ?? 0)
        return log(1 + (Double(documentCount) - df + 0.5) / (df + 0.5))
    }

    init(postings: [String: [(document: Int32, frequency: Int32)]], lengths: [Int32], parameters: Parameters) {
        self.postings = postings
        self.lengths = lengths
        self.parameters = parameters
    }

    /// Every document's score for `query` (0 where no term matches), one pass per query term.
    package func scores(_ query: [String], parameters: Parameters? = nil) -> [Double] {
        let p = parameters ?? self.parameters
        var scores = [Double](repeating: 0, count: documentCount)
        let average = averageLength
        for term in query {
            guard let list = postings[term] else { continue }
            let weight = idf(term)
            for (document, frequency) in list {
                let tf = Double(frequency)
                let norm = p.k1 * (1 - p.b + p.b * Double(lengths[Int(document)]) / average)
                scores[Int(document)] += weight * tf / (tf + norm)
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
    package static func select(_ scores: [Double], k: Int) -> [(document: Int, score: Double)] {
        var heap: [(document: Int, score: Double)] = []
        heap.reserveCapacity(k + 1)
        func worse(_ a: (document: Int, score: Double), _ b: (document: Int, score: Double)) -> Bool {
            a.score < b.score || (a.score == b.score && a.document > b.document)
        }
        for (document, score) in scores.enumerated() where score > 0 {
            if heap.count < k {
                heap.append((document, score))
                if heap.count == k { heap.sort { worse($1, $0) } }
            } else if k > 0, worse(heap[k - 1], (document, score)) {
                // Insert in order (k is small: a linear shift beats a heap's constant factors).
                var index = k - 1
                while index > 0 && worse(heap[index - 1], (document, score)) { index -= 1 }
                heap.insert((document, score), at: index)
                heap.removeLast()
            }
        }
        if heap.count < k { heap.sort { worse($1, $0) } }
        return heap
    }
}
