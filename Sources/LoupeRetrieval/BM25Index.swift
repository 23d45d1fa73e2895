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
    /// Every posting's score under `parameters` (idf × tf part), laid out for `loupe_bm25_top_k`, so
    /// a query at the index's own parameters only adds (bm25s's "eager" scoring) and skips the ranges
    /// of documents that cannot reach its top k.
    private var impacts = Impacts()

    /// The impacts in the layout `loupe_bm25_term` reads: documents renumbered so that similar ones
    /// are neighbours, a posting 4 bytes (its offset in a range of 64 documents and an index into the
    /// term's distinct impacts, which are few: each is a function of tf and the document's length),
    /// and for each range a term occurs in, the first posting there and the largest impact.
    private struct Impacts: Sendable {
        struct Term: Sendable {
            var tableStart: Int
            var entryStart: Int
            var entries: Int
        }
        var slots: [String: Int] = [:]
        var terms: [Term] = []
        var words: [UInt32] = []
        var tables: [Double] = []
        var ranges: [UInt32] = []
        var firsts: [UInt32] = []
        var bounds: [Float] = []
        /// `order[n]`: the original number of the document numbered `n` for queries.
        var order: [Int32] = []
        /// False when the index is too large for the 32-bit layout: queries then score from `postings`.
        var built = false
    }

    package var documentCount: Int { lengths.count }
    /// Bytes of the precomputed impacts as queries read them, and as a document number and a
    /// double a posting would take.
    package var impactBytes: (held: Int, wide: Int) {
        let held =
            impacts.words.count * 4 + impacts.tables.count * 8 + impacts.ranges.count * 12 + impacts.order.count * 4
        return (held, impacts.words.count * 12)
    }
    package var averageLength: Double {
        lengths.isEmpty ? 0 : Double(lengths.reduce(0) { $0 + Int($1) }) / Double(lengths.count)
    }

    /// Indexes documents given as their terms.
    ///
    /// Each token costs one lookup in `TermNumbers` (a term becomes a number the first time it
    /// is seen); `loupe_bm25_postings` then turns the numbered tokens into every term's postings in
    /// two passes. Appending to a Swift array per term under `[String: Int32]`, hashing each
    /// token with SipHash, was most of the 2.9 s build of Cranfield ×100's 140,000 documents;
    /// the build is now about 2 s.
    package init(documents: [[String]], parameters: Parameters = Parameters()) {
        self.parameters = parameters
        var numbers = TermNumbers()
        var ids: [Int32] = []
        var starts = [0]
        var lengths: [Int32] = []
        starts.reserveCapacity(documents.count + 1)
        lengths.reserveCapacity(documents.count)
        ids.reserveCapacity(documents.reduce(0) { $0 + $1.count })
        for document in documents {
            lengths.append(Int32(document.count))
            for term in document { ids.append(Int32(numbers.number(term))) }
            starts.append(ids.count)
        }
        let flat = FlatPostings(terms: numbers.terms, ids: ids, starts: starts)
        self.postings = flat.dictionary
        self.lengths = lengths
        self.defaultNorms = norms(parameters)
        self.impacts = makeImpacts(flat)
    }

    /// Every term's postings one after another, as the C kernels take them: term `t` of
    /// `vocabulary` has `documents[offsets[t] ..< offsets[t + 1]]`, and `frequencies` alike.
    private struct FlatPostings {
        var vocabulary: [String]
        var offsets: [Int]
        var documents: [Int32]
        var frequencies: [Int32]

        /// From the tokens, numbered (`ids`), document d's being `ids[starts[d] ..< starts[d + 1]]`.
        init(terms: [String], ids: [Int32], starts: [Int]) {
            vocabulary = terms
            var offsets = [Int](repeating: 0, count: terms.count + 1)
            var frequencies: [Int32] = []
            // At most one posting a token; what is not written is never touched.
            documents = [Int32](unsafeUninitializedCapacity: max(ids.count, 1)) { documents, documentCount in
                frequencies = [Int32](unsafeUninitializedCapacity: max(ids.count, 1)) { frequencies, frequencyCount in
                    let status = loupe_bm25_postings(
                        terms.count, ids, starts, starts.count - 1, &offsets, documents.baseAddress,
                        frequencies.baseAddress)
                    precondition(status == 0, "out of memory numbering postings")
                    frequencyCount = offsets[terms.count]
                }
                documentCount = offsets[terms.count]
            }
            self.offsets = offsets
            self.frequencies = frequencies
        }

        /// Each term's postings as `BM25Index.postings` holds them: the inverse of `init(_:)`.
        var dictionary: [String: [(document: Int32, frequency: Int32)]] {
            var postings: [String: [(document: Int32, frequency: Int32)]] = [:]
            postings.reserveCapacity(vocabulary.count)
            documents.withUnsafeBufferPointer { documents in
                frequencies.withUnsafeBufferPointer { frequencies in
                    for (t, term) in vocabulary.enumerated() {
                        let start = offsets[t]
                        postings[term] = .init(unsafeUninitializedCapacity: offsets[t + 1] - start) { list, count in
                            for i in 0..<list.count {
                                list.initializeElement(at: i, to: (documents[start + i], frequencies[start + i]))
                            }
                            count = list.count
                        }
                    }
                }
            }
            return postings
        }

        init(_ postings: [String: [(document: Int32, frequency: Int32)]]) {
            vocabulary = Array(postings.keys)
            offsets = [0]
            documents = []
            frequencies = []
            for term in vocabulary {
                for posting in postings[term]! {
                    documents.append(posting.document)
                    frequencies.append(posting.frequency)
                }
                offsets.append(documents.count)
            }
        }
    }

    package func idf(_ term: String) -> Double {
        Self.idf(documentFrequency: postings[term]?.count ?? 0, documents: documentCount)
    }

    /// Lucene's idf, ln(1 + (N − df + 0.5) / (df + 0.5)): the one expression every score uses.
    private static func idf(documentFrequency: Int, documents: Int) -> Double {
        let (df, n) = (Double(documentFrequency), Double(documents))
        return log(1 + (n - df + 0.5) / (df + 0.5))
    }

    init(postings: [String: [(document: Int32, frequency: Int32)]], lengths: [Int32], parameters: Parameters) {
        self.postings = postings
        self.lengths = lengths
        self.parameters = parameters
        self.defaultNorms = norms(parameters)
        self.impacts = makeImpacts(FlatPostings(postings))
    }

    private func makeImpacts(_ flat: FlatPostings) -> Impacts {
        var impacts = Impacts()
        let vocabulary = flat.vocabulary
        let (offsets, documents, frequencies) = (flat.offsets, flat.documents, flat.frequencies)
        let total = offsets[vocabulary.count]
        var weights = [Double](repeating: 0, count: vocabulary.count)
        var hashes = [UInt64](repeating: 0, count: vocabulary.count)
        for (t, term) in vocabulary.enumerated() {
            weights[t] = Self.idf(documentFrequency: offsets[t + 1] - offsets[t], documents: documentCount)
            hashes[t] = TermNumbers.hash(term)
            impacts.slots[term] = t
        }
        var order = [Int32](repeating: 0, count: documentCount)
        loupe_bm25_order(vocabulary.count, offsets, documents, hashes, documentCount, &order)
        var tableStarts = [Int](repeating: 0, count: vocabulary.count + 1)
        var entryStarts = [Int](repeating: 0, count: vocabulary.count + 1)
        var status: Int32 = -1
        var (tables, ranges, firsts, bounds) = ([Double](), [UInt32](), [UInt32](), [Float]())
        // Every output holds at most one value a posting; pages past what is written are never touched.
        let words = [UInt32](unsafeUninitializedCapacity: max(total, 1)) { words, wordCount in
            tables = [Double](unsafeUninitializedCapacity: max(total, 1)) { tables, tableCount in
                ranges = [UInt32](unsafeUninitializedCapacity: max(total, 1)) { ranges, rangeCount in
                    firsts = [UInt32](unsafeUninitializedCapacity: total + 1) { firsts, firstCount in
                        bounds = [Float](unsafeUninitializedCapacity: max(total, 1)) { bounds, boundCount in
                            status = loupe_bm25_layout(
                                vocabulary.count, offsets, documents, frequencies, weights, defaultNorms, lengths,
                                documentCount, order, words.baseAddress, tables.baseAddress, &tableStarts,
                                ranges.baseAddress, firsts.baseAddress, bounds.baseAddress, &entryStarts)
                            let entries = status == 0 ? entryStarts[vocabulary.count] : 0
                            boundCount = entries
                            firstCount = status == 0 ? entries + 1 : 0
                            rangeCount = entries
                            tableCount = status == 0 ? tableStarts[vocabulary.count] : 0
                            wordCount = status == 0 ? total : 0
                        }
                    }
                }
            }
        }
        guard status == 0 else { return Impacts() }
        (impacts.words, impacts.tables, impacts.ranges, impacts.firsts, impacts.bounds) =
            (words, tables, ranges, firsts, bounds)
        impacts.terms = (0..<vocabulary.count).map {
            Impacts.Term(
                tableStart: tableStarts[$0], entryStart: entryStarts[$0], entries: entryStarts[$0 + 1] - entryStarts[$0]
            )
        }
        impacts.order = order
        impacts.built = true
        return impacts
    }

    /// Calls `body` with the C view of `query`'s terms (one per occurrence, unknown terms left
    /// out), valid only inside it.
    private func withTerms<R>(_ query: [String], _ body: (UnsafeBufferPointer<loupe_bm25_term>) -> R) -> R {
        let slots = query.compactMap { impacts.slots[$0] }
        return impacts.words.withUnsafeBufferPointer { words in
            impacts.tables.withUnsafeBufferPointer { tables in
                impacts.ranges.withUnsafeBufferPointer { ranges in
                    impacts.firsts.withUnsafeBufferPointer { firsts in
                        impacts.bounds.withUnsafeBufferPointer { bounds in
                            let terms = slots.map { slot in
                                let term = impacts.terms[slot]
                                return loupe_bm25_term(
                                    words: words.baseAddress, table: tables.baseAddress.map { $0 + term.tableStart },
                                    ranges: ranges.baseAddress.map { $0 + term.entryStart },
                                    firsts: firsts.baseAddress.map { $0 + term.entryStart },
                                    bounds: bounds.baseAddress.map { $0 + term.entryStart }, entries: term.entries)
                            }
                            return terms.withUnsafeBufferPointer(body)
                        }
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
        if p == self.parameters && impacts.built {
            withTerms(query) { terms in
                scores.withUnsafeMutableBufferPointer { scores in
                    loupe_bm25_scores(terms.baseAddress, terms.count, impacts.order, scores.baseAddress)
                }
            }
            return scores
        }
        let norms = p == self.parameters ? defaultNorms : self.norms(p)
        scores.withUnsafeMutableBufferPointer { scores in
            norms.withUnsafeBufferPointer { norms in
                for term in query {
                    guard let list = postings[term] else { continue }
                    let weight = Self.idf(documentFrequency: list.count, documents: documentCount)
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

    /// Up to this many documents, `search` scores every document and selects from the dense
    /// scores: at Cranfield's size no range of 64 can be skipped, so bounding, bucketing and
    /// offering range by range only add work. Measured against the ranged search on Cranfield
    /// (1,400 documents): 1.33×, the same run file; on 4,000 documents of Cranfield ×100 the two
    /// were even (docs/performance/retrieval.md).
    static let denseSearchDocuments = 2048

    /// The `k` best documents with a score above 0, best first (ties: lower document first).
    package func search(_ query: [String], k: Int, parameters: Parameters? = nil) -> [(document: Int, score: Double)] {
        guard parameters ?? self.parameters == self.parameters, impacts.built,
            documentCount > Self.denseSearchDocuments
        else {
            return TopK.select(scores(query, parameters: parameters), k: k)
        }
        // The index's own parameters: the precomputed impacts, a range of 64 documents at a time,
        // the ranges that can reach the top k only (same sums as `scores`, same order as TopK).
        let limit = min(max(k, 0), documentCount)
        var documents = [Int64](repeating: 0, count: limit)
        var best = [Double](repeating: 0, count: limit)
        let kept = withTerms(query) { terms in
            loupe_bm25_top_k(terms.baseAddress, terms.count, documentCount, impacts.order, limit, &documents, &best)
        }
        // The scratch grows with ranges × query terms: where it could not be had, score every document.
        guard kept >= 0 else { return TopK.select(scores(query), k: k) }
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
