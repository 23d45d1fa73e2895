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
    /// Every posting's score under `parameters` (idf × tf part), laid out term by term, so a
    /// query at the index's own parameters only adds (bm25s's "eager" scoring).
    private var impacts = Impacts()

    private struct Impacts: Sendable {
        var slots: [String: Int] = [:]
        var starts: [Int] = [0]
        var documents: [Int32] = []
        var scores: [Double] = []
    }

    package var documentCount: Int { lengths.count }
    package var averageLength: Double {
        lengths.isEmpty ? 0 : Double(lengths.reduce(0) { $0 + Int($1) }) / Double(lengths.count)
    }

    /// Indexes documents given as their terms.
    ///
    /// Each occurrence costs one hashed lookup: a term becomes a number the first time it is seen,
    /// and its posting list is an array under that number, whose last entry is this document's
    /// while the document is read (counting in a dictionary per document, then appending under
    /// the term, hashed every term twice and took 2.6 s of Cranfield ×100's 140,000 documents).
    package init(documents: [[String]], parameters: Parameters = Parameters()) {
        self.parameters = parameters
        var numbers: [String: Int32] = [:]
        var terms: [String] = []
        var lists: [[(document: Int32, frequency: Int32)]] = []
        var lengths: [Int32] = []
        lengths.reserveCapacity(documents.count)
        for (index, document) in documents.enumerated() {
            let number = Int32(index)
            lengths.append(Int32(document.count))
            for term in document {
                let id: Int
                if let known = numbers[term] {
                    id = Int(known)
                } else {
                    id = terms.count
                    numbers[term] = Int32(id)
                    terms.append(term)
                    lists.append([])
                }
                if lists[id].last?.document == number {
                    lists[id][lists[id].count - 1].frequency += 1
                } else {
                    lists[id].append((number, 1))
                }
            }
        }
        var postings: [String: [(document: Int32, frequency: Int32)]] = [:]
        postings.reserveCapacity(terms.count)
        for (term, list) in zip(terms, lists) { postings[term] = list }
        self.postings = postings
        self.lengths = lengths
        self.defaultNorms = norms(parameters)
        self.impacts = makeImpacts()
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
        self.impacts = makeImpacts()
    }

    private func makeImpacts() -> Impacts {
        var impacts = Impacts()
        let total = postings.values.reduce(0) { $0 + $1.count }
        impacts.documents.reserveCapacity(total)
        impacts.scores.reserveCapacity(total)
        let n = Double(documentCount)
        for (term, list) in postings {
            impacts.slots[term] = impacts.starts.count - 1
            let df = Double(list.count)
            let weight = log(1 + (n - df + 0.5) / (df + 0.5))
            for posting in list {
                let tf = Double(posting.frequency)
                impacts.documents.append(posting.document)
                impacts.scores.append(weight * tf / (tf + defaultNorms[Int(posting.document)]))
            }
            impacts.starts.append(impacts.documents.count)
        }
        return impacts
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
        if p == self.parameters {
            scores.withUnsafeMutableBufferPointer { scores in
                impacts.documents.withUnsafeBufferPointer { documents in
                    impacts.scores.withUnsafeBufferPointer { impacts in
                        for term in query {
                            guard let slot = self.impacts.slots[term] else { continue }
                            for i in self.impacts.starts[slot]..<self.impacts.starts[slot + 1] {
                                scores[Int(documents[i])] += impacts[i]
                            }
                        }
                    }
                }
            }
            return scores
        }
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
