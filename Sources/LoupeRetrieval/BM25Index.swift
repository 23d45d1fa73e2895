import CKernels
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

    /// The impacts in the layouts `loupe_bm25_term` reads. Queries stream them from memory (the
    /// index is far larger than the caches), so their size is their speed: a compact term takes 4
    /// bytes a posting (a 16-bit gap to the previous document, a 16-bit index into the term's
    /// distinct contributions, which are few: each is a function of tf and the document's length),
    /// against 12 for a document number and a double.
    private struct Impacts: Sendable {
        struct Term: Sendable {
            /// In `packed` for a compact term, in `documents` and `scores` for a wide one.
            var start: Int
            var length: Int
            var tableStart: Int
            var origin: Int32
            var compact: Bool
        }
        var slots: [String: Int] = [:]
        var terms: [Term] = []
        var packed: [UInt32] = []
        var tables: [Double] = []
        var documents: [Int32] = []
        var scores: [Double] = []
    }

    package var documentCount: Int { lengths.count }
    /// Bytes of the precomputed impacts as queries read them, and as a document number and a
    /// double a posting (the layout before compact terms) would take.
    package var impactBytes: (held: Int, wide: Int) {
        let held = impacts.packed.count * 4 + impacts.tables.count * 8 + impacts.documents.count * 12
        return (held, impacts.terms.reduce(0) { $0 + $1.length } * 12)
    }
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
        impacts.packed.reserveCapacity(total)
        let n = Double(documentCount)
        // A contribution is a function of (tf, length): numbering the distinct lengths lets a term
        // find its distinct contributions by indexing `codes` with (tf − 1) · lengthClasses + class.
        let distinct = Array(Set(lengths)).sorted()
        let classOf = Dictionary(uniqueKeysWithValues: distinct.enumerated().map { ($1, $0) })
        let lengthClass = lengths.map { classOf[$0]! }
        let frequencies = 32
        var codes = [Int32](repeating: -1, count: frequencies * max(distinct.count, 1))
        var touched: [Int] = []
        for (term, list) in postings {
            impacts.slots[term] = impacts.terms.count
            let df = Double(list.count)
            let weight = log(1 + (n - df + 0.5) / (df + 0.5))
            let origin = list.first?.document ?? 0
            var table: [Double] = []
            var rare: [UInt64: UInt32] = [:]  // tf past `frequencies`
            let start = impacts.packed.count
            var previous = origin
            var compact = true
            for posting in list {
                let document = Int(posting.document)
                let tf = Double(posting.frequency)
                let value = weight * tf / (tf + defaultNorms[document])
                let gap = posting.document - previous
                previous = posting.document
                var code: UInt32
                if posting.frequency <= frequencies {
                    let key = (Int(posting.frequency) - 1) * distinct.count + lengthClass[document]
                    if codes[key] < 0 {
                        codes[key] = Int32(table.count)
                        touched.append(key)
                        table.append(value)
                    }
                    code = UInt32(codes[key])
                } else if let known = rare[value.bitPattern] {
                    code = known
                } else {
                    code = UInt32(table.count)
                    rare[value.bitPattern] = code
                    table.append(value)
                }
                guard gap < 1 << 16, code < 1 << 16 else {
                    compact = false
                    break
                }
                impacts.packed.append(UInt32(gap) | code << 16)
            }
            for key in touched { codes[key] = -1 }
            touched.removeAll(keepingCapacity: true)
            if compact {
                impacts.terms.append(
                    .init(
                        start: start, length: list.count, tableStart: impacts.tables.count, origin: origin,
                        compact: true))
                impacts.tables.append(contentsOf: table)
            } else {
                impacts.packed.removeSubrange(start...)
                impacts.terms.append(
                    .init(start: impacts.documents.count, length: list.count, tableStart: 0, origin: 0, compact: false))
                for posting in list {
                    let tf = Double(posting.frequency)
                    impacts.documents.append(posting.document)
                    impacts.scores.append(weight * tf / (tf + defaultNorms[Int(posting.document)]))
                }
            }
        }
        return impacts
    }

    /// Calls `body` with the C view of `query`'s terms (one per occurrence, unknown terms left
    /// out), valid only inside it.
    private func withTerms<R>(_ query: [String], _ body: (UnsafeBufferPointer<loupe_bm25_term>) -> R) -> R {
        let slots = query.compactMap { impacts.slots[$0] }
        return impacts.packed.withUnsafeBufferPointer { packed in
            impacts.tables.withUnsafeBufferPointer { tables in
                impacts.documents.withUnsafeBufferPointer { documents in
                    impacts.scores.withUnsafeBufferPointer { scores in
                        let terms = slots.map { slot in
                            let term = impacts.terms[slot]
                            return term.compact
                                ? loupe_bm25_term(
                                    packed: packed.baseAddress! + term.start,
                                    table: tables.baseAddress! + term.tableStart,
                                    documents: nil, impacts: nil, length: term.length, origin: term.origin)
                                : loupe_bm25_term(
                                    packed: nil, table: nil, documents: documents.baseAddress! + term.start,
                                    impacts: scores.baseAddress! + term.start, length: term.length, origin: 0)
                        }
                        return terms.withUnsafeBufferPointer(body)
                    }
                }
            }
        }
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
            withTerms(query) { terms in
                scores.withUnsafeMutableBufferPointer { scores in
                    loupe_bm25_scores(terms.baseAddress, terms.count, documentCount, scores.baseAddress)
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
        guard parameters ?? self.parameters == self.parameters else {
            return TopK.select(scores(query, parameters: parameters), k: k)
        }
        // The index's own parameters: the precomputed impacts, summed a block of documents at a
        // time and ranked while the block is in L1 (same sums as `scores`, same order as TopK).
        let limit = min(max(k, 0), documentCount)
        var documents = [Int64](repeating: 0, count: limit)
        var best = [Double](repeating: 0, count: limit)
        let kept = withTerms(query) { terms in
            loupe_bm25_top_k(terms.baseAddress, terms.count, documentCount, limit, &documents, &best)
        }
        return (0..<kept).map { (Int(documents[$0]), best[$0]) }
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
