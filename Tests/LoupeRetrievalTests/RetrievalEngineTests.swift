import Foundation
import LoupeRetrieval
import Testing

@Suite struct TokenizerTests {
    @Test func lowercasesSplitsOnNonAlphanumericsAndDropsStopwords() {
        let tokenizer = RetrievalTokenizer()
        #expect(
            tokenizer.terms("The Mach-2 flow, at 30,000 ft: is it STABLE?") == [
                "mach", "2", "flow", "30", "000", "ft", "stable",
            ])
        // Non-ASCII letters separate words, as `[^a-z0-9]+` does.
        #expect(tokenizer.terms("naïve café") == ["na", "ve", "caf"])
        let tokens = tokenizer.tokens("An airfoil's lift")
        #expect(tokens.map(\.term) == ["airfoil", "s", "lift"])
        #expect(tokens.map(\.range) == [3..<10, 11..<12, 13..<17])
    }

    @Test(arguments: [
        ("caresses", "caress"), ("ponies", "poni"), ("cats", "cat"), ("feed", "feed"), ("agreed", "agre"),
        ("plastered", "plaster"), ("motoring", "motor"), ("conflated", "conflat"), ("hopping", "hop"),
        ("filing", "file"), ("happy", "happi"), ("relational", "relat"), ("conditional", "condit"),
        ("valenci", "valenc"), ("digitizer", "digit"), ("triplicate", "triplic"), ("hopeful", "hope"),
        ("goodness", "good"), ("revival", "reviv"), ("adjustment", "adjust"), ("adoption", "adopt"),
        ("probate", "probat"), ("controll", "control"), ("generalizations", "gener"), ("oscillators", "oscil"),
        ("aerodynamics", "aerodynam"), ("is", "is"),
    ])
    func porterStemsAsThePaper(word: String, stem: String) {
        #expect(PorterStemmer.stem(word) == stem)
    }
}

@Suite struct BM25Tests {
    let documents = [["wing", "flutter", "wing"], ["flutter"], ["heat", "transfer", "boundary", "layer"]]

    @Test func scoresFollowLucenesFormula() {
        let index = BM25Index(documents: documents)
        let scores = index.scores(["wing", "flutter"])
        let average = 8.0 / 3
        func part(_ tf: Double, _ length: Double) -> Double { tf / (tf + 1.2 * (1 - 0.75 + 0.75 * length / average)) }
        let idfWing = log(1 + (3 - 1 + 0.5) / (1 + 0.5))
        let idfFlutter = log(1 + (3 - 2 + 0.5) / (2 + 0.5))
        #expect(abs(scores[0] - (idfWing * part(2, 3) + idfFlutter * part(1, 3))) < 1e-12)
        #expect(abs(scores[1] - idfFlutter * part(1, 1)) < 1e-12)
        #expect(scores[2] == 0)
        #expect(index.search(["wing", "flutter"], k: 5).map(\.document) == [0, 1])
        let explained = index.explain(["wing", "flutter"], document: 0)
        #expect(explained.map(\.term) == ["wing", "flutter"])
        #expect(abs(explained.map(\.score).reduce(0, +) - scores[0]) < 1e-12)
        // A repeated query term counts twice.
        #expect(abs(index.scores(["flutter", "flutter"])[1] - 2 * scores[1]) < 1e-12)
    }

    /// Every document's score the plain way: each query term in order, idf · tf / (tf + norm).
    static func reference(_ documents: [[String]], _ query: [String]) -> [Double] {
        let n = Double(documents.count)
        let average = Double(documents.reduce(0) { $0 + $1.count }) / n
        var scores = [Double](repeating: 0, count: documents.count)
        for term in query {
            let df = Double(documents.filter { $0.contains(term) }.count)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for (d, document) in documents.enumerated() {
                let tf = Double(document.filter { $0 == term }.count)
                guard tf > 0 else { continue }
                scores[d] += idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * Double(document.count) / average))
            }
        }
        return scores
    }

    /// The renumbered, range-at-a-time impacts give the very doubles of adding each term's impacts
    /// in query order, with repeated terms and a term in two documents far apart; the pruned top k
    /// is the full ranking's first k at every k, ties (most scores here tie) to the lower document.
    @Test func searchIsBitIdenticalToTermByTermSums() {
        var state: UInt64 = 0x2545_F491
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let words = ["wing", "flutter", "heat", "shock", "layer", "mach", "panel", "jet"]
        var documents = (0..<70_000).map { d -> [String] in
            (0..<(1 + next(12))).map { _ in words[next(d % 3 == 0 ? 3 : words.count)] }
        }
        // "rare" at the first and last documents only: a gap past 16 bits.
        documents[0].append("rare")
        documents[69_999].append("rare")
        let index = BM25Index(documents: documents)
        for query in [["wing", "flutter"], ["jet", "rare", "jet", "heat"], ["rare"], ["mach", "unknown", "panel"]] {
            let expected = Self.reference(documents, query)
            #expect(index.scores(query) == expected, "\(query)")
            let ranked = expected.enumerated().filter { $0.element > 0 }.sorted {
                $0.element != $1.element ? $0.element > $1.element : $0.offset < $1.offset
            }
            for k in [1, 7, 100, 3_000] {
                let found = index.search(query, k: k)
                #expect(found.map(\.document) == ranked.prefix(k).map(\.offset), "\(query) k \(k)")
                #expect(found.map(\.score) == ranked.prefix(k).map(\.element), "\(query) k \(k)")
            }
        }
        #expect(index.search(["unknown"], k: 10).isEmpty)
        #expect(index.search(["wing"], k: 0).isEmpty)
    }

    /// Near-duplicates (the shape that lets whole ranges be skipped: copies of a document with a
    /// tenth of their words dropped, interleaved as Cranfield ×100 is) still give exactly the full
    /// ranking's top k, scores and ties included.
    @Test func prunedSearchOverNearDuplicatesIsTheFullRanking() {
        var state: UInt64 = 0x51_7CC1_B727_220A
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        // Words drawn with a skew, so some are in most documents and some in a few.
        func word() -> String { "w\(next(1 + next(600)))" }
        let originals = (0..<250).map { _ in (0..<(5 + next(40))).map { _ in word() } }
        var documents: [[String]] = []
        for copy in 0..<40 {
            for original in originals {
                documents.append(copy == 0 ? original : original.filter { _ in next(10) != 0 })
            }
        }
        documents[123] = []  // a document without terms
        let index = BM25Index(documents: documents)
        for _ in 0..<12 {
            let query = (0..<(2 + next(9))).map { _ in word() }
            let all = index.scores(query)
            for k in [1, 10, 100, 1_000] {
                let expected = TopK.select(all, k: k)
                let found = index.search(query, k: k)
                #expect(found.map(\.document) == expected.map(\.document), "\(query) k \(k)")
                #expect(found.map(\.score) == expected.map(\.score), "\(query) k \(k)")
            }
        }
        #expect(BM25Index(documents: []).search(["w1"], k: 5).isEmpty)
        let sparse = BM25Index(documents: [[], ["wing"], []])
        #expect(sparse.search(["wing"], k: 3).map(\.document) == [1])
        #expect(sparse.scores(["wing"]).map { $0 > 0 } == [false, true, false])
    }

    @Test func termNumbersAreFirstSeenOrderAndSurviveGrowth() {
        var numbers = TermNumbers()
        var reference: [String: Int] = [:]
        let terms =
            (0..<5_000).map { "t\($0 % 2_600)" } + [
                "", "naïve", "日本", "🙂", "naïve", "a-much-longer-term-than-fifteen-bytes",
            ]
        for term in terms {
            let expected = reference[term] ?? reference.count
            reference[term] = expected
            #expect(numbers.number(term) == expected, "\(term)")
        }
        #expect(numbers.terms.count == reference.count)
        #expect(numbers.terms.enumerated().allSatisfy { reference[$0.element] == $0.offset })
        #expect(TermNumbers.hash("wing") == TermNumbers.hash(String("xwing".dropFirst())))
    }

    @Test func topKKeepsTheBestAndBreaksTiesByIndex() {
        let picked = TopK.select([0.5, 2, 0, 2, 1, 3], k: 3)
        #expect(picked.map(\.document) == [5, 1, 3])
        #expect(TopK.select([1, 0, 2], k: 10).map(\.document) == [2, 0])
    }

    @Test(arguments: [1, 7, 100, 999])
    func topKAgreesWithAFullSortOnTiedScores(k: Int) {
        var state: UInt64 = 0x9E37_79B9
        let scores = (0..<1000).map { _ -> Double in
            state = state &* 6_364_136_223_846_793_005 &+ 1
            return Double((state >> 33) % 40) / 4  // many ties, some zeros
        }
        let expected = scores.enumerated().filter { $0.element > 0 }.sorted {
            $0.element != $1.element ? $0.element > $1.element : $0.offset < $1.offset
        }.prefix(k).map(\.offset)
        #expect(TopK.select(scores, k: k).map(\.document) == Array(expected))
    }
}

@Suite struct RetrievalMetricsTests {
    // The toy cases the research notes verified against pytrec_eval and ranx.
    @Test func matchesTrecEvalOnVerifiedCases() {
        let single = RetrievalMetrics.evaluate(run: [("a", 2), ("b", 1)], qrels: ["b": 1])
        #expect(abs(single.ndcg[10]! - 0.6309) < 1e-4)
        let graded = RetrievalMetrics.evaluate(run: [("a", 3), ("x", 2), ("b", 1)], qrels: ["a": 2, "b": 1])
        #expect(abs(graded.ndcg[10]! - 0.9502) < 1e-4)
        // Ties: document id descending decides.
        #expect(RetrievalMetrics.evaluate(run: [("d1", 1), ("d2", 1)], qrels: ["d1": 1]).reciprocalRank == 0.5)
        #expect(RetrievalMetrics.evaluate(run: [("d1", 1), ("d2", 1)], qrels: ["d2": 1]).reciprocalRank == 1)
        // AP divides by R, not by the hits retrieved.
        let ap = RetrievalMetrics.evaluate(run: [("a", 3), ("x", 2)], qrels: ["a": 1, "b": 1, "c": 1], cutoffs: [2])
        #expect(abs(ap.averagePrecision - 1.0 / 3) < 1e-12)
        #expect(ap.precision[2] == 0.5 && abs(ap.recall[2]! - 1.0 / 3) < 1e-12)
        // P@k divides by k even when fewer were retrieved; judged-0 is not relevant.
        let short = RetrievalMetrics.evaluate(run: [("a", 1)], qrels: ["a": 1, "z": 0], cutoffs: [10])
        #expect(short.precision[10] == 0.1 && short.recall[10] == 1)
    }

    @Test func meansCountEveryJudgedQuery() {
        let perQuery = ["q1": RetrievalMetrics.Scores(averagePrecision: 1, reciprocalRank: 1)]
        let mean = RetrievalMetrics.mean(perQuery, queries: ["q1", "q2"])
        #expect(mean.averagePrecision == 0.5 && mean.reciprocalRank == 0.5)
    }

    @Test func rrfAddsReciprocalRanks() {
        let fused = RankFusion.reciprocalRank([["a", "b", "c"], ["c", "a"]], k: 60)
        #expect(fused.map(\.document) == ["a", "c", "b"])
        #expect(abs(fused[0].score - (1.0 / 61 + 1.0 / 62)) < 1e-12)
    }

    @Test func qrelsParseAndBadLinesNameTheirLine() throws {
        let qrels = try Qrels.parse("1 0 12 2\n1 0 13 1\n\n2 0 7 0\n", file: "q.trec")
        #expect(qrels.judgments == ["1": ["12": 2, "13": 1], "2": ["7": 0]])
        #expect(throws: RetrievalError.self) { try Qrels.parse("1 0 12\n", file: "q.trec") }
        do {
            _ = try Qrels.parse("1 0 12 2\n1 0 x high\n", file: "q.trec")
        } catch {
            #expect(error.description.hasPrefix("q.trec:2: expected"))
        }
    }
}

/// BM25 on the real Cranfield collection against the peers' figures (research notes §5.1, bm25s
/// 0.3.16 lucene, same tokenisation, k1 1.2, b 0.75, title + text, depth 100).
@Suite struct CranfieldBM25Tests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sample-data/cranfield")

    struct Line: Decodable {
        var id: String
        var title: String?
        var text: String
    }

    static func lines(_ name: String) throws -> [Line] {
        try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(Line.self, from: Data($0.utf8))
        }
    }

    @Test(arguments: [(false, 0.3477, 0.2760), (true, 0.3685, 0.2985)])
    func matchesBM25sWithin0002(stem: Bool, ndcg: Double, map: Double) throws {
        let tokenizer = RetrievalTokenizer(stem: stem)
        let corpus = try Self.lines("corpus.jsonl")
        let index = BM25Index(documents: corpus.map { tokenizer.terms(($0.title ?? "") + " " + $0.text) })
        let qrels = try Qrels.parse(
            String(contentsOf: Self.root.appendingPathComponent("qrels.trec"), encoding: .utf8), file: "qrels.trec")
        var perQuery: [String: RetrievalMetrics.Scores] = [:]
        for query in try Self.lines("queries.jsonl") {
            let hits = index.search(tokenizer.terms(query.text), k: 100)
            perQuery[query.id] = RetrievalMetrics.evaluate(
                run: hits.map { (corpus[$0.document].id, $0.score) }, qrels: qrels.judgments[query.id] ?? [:])
        }
        let mean = RetrievalMetrics.mean(perQuery, queries: Array(qrels.judgments.keys))
        // Measured: 0.3477 / 0.2760 unstemmed (bm25s to 4 decimals); stemmed 0.3680 / 0.3001.
        // Porter (ours) is not Snowball (PyStemmer), so the stemmed run gets a wider band.
        let tolerance = stem ? 0.005 : 0.002
        #expect(abs(mean.ndcg[10]! - ndcg) <= tolerance, "nDCG@10 \(mean.ndcg[10]!)")
        #expect(abs(mean.averagePrecision - map) <= tolerance, "MAP@100 \(mean.averagePrecision)")
    }
}

@Suite struct CorpusTests {
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let long = Array(repeating: UInt8(ascii: "a"), count: 1000)
        #expect(SHA256.hex(long) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func aLineNestedTooDeepIsSaidToBeSoAndNotToBeANonObject() throws {
        let deep =
            #"{"id": "1", "text": "# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        let (_, warnings) = try CorpusReader.jsonl(#"[1]"# + "\n" + deep, file: "c.jsonl", strict: false)
        #expect(warnings.first == "c.jsonl:1: not a JSON object, line skipped")
        #expect(warnings.last?.hasPrefix("c.jsonl:2: not valid JSON") == true)
        #expect(warnings.last?.contains("nested more than 512 levels deep") == true)
    }

    @Test func jsonlLinesBecomeDocumentsAndBadLinesAreNamed() throws {
        let text = """
            {"id": "1", "title": "Wings", "text": "flutter of wings"}
            not json
            {"id": 7, "text": "numeric id"}
            {"title": "no id", "text": "x"}

            """
        let (documents, warnings) = try CorpusReader.jsonl(text, file: "c.jsonl", strict: false)
        #expect(documents.map(\.id) == ["1", "7"])
        #expect(documents[0].body == "Wings\n\nflutter of wings")
        #expect(documents[1].body == "numeric id")
        #expect(
            warnings == [
                "c.jsonl:2: not valid JSON (column 1: expected null), line skipped",
                "c.jsonl:4: no \"id\" (string or number), line skipped",
            ])
        #expect(throws: RetrievalError("c.jsonl:2: not valid JSON (column 1: expected null)")) {
            try CorpusReader.jsonl(text, file: "c.jsonl", strict: true)
        }
    }

    @Test func whitespaceAroundALineOrAloneOnItAndCRLFLineEndsAreNoProblem() throws {
        let text = "  {\"id\": \"9\", \"text\": \"spaced\"}\t \n \t \n\n{\"id\": \"10\", \"text\": \"x\"}\n  [2] "
        let (documents, warnings) = try CorpusReader.jsonl(text, file: "c.jsonl", strict: false)
        #expect(documents.map(\.id) == ["9", "10"])
        #expect(warnings == ["c.jsonl:5: not a JSON object, line skipped"])
        // A file written with CRLF line ends.
        let crlf = "{\"id\": \"1\", \"text\": \"a\"}\r\n{\"id\": \"2\", \"text\": \"b\"}\r\nnope\r\n"
        let read = try CorpusReader.jsonl(crlf, file: "w.jsonl", strict: false)
        #expect(read.documents.map(\.id) == ["1", "2"])
        #expect(read.warnings == ["w.jsonl:3: not valid JSON (column 1: expected null), line skipped"])
    }

    @Test func binaryAndInvalidUTF8AreRefusedByName() {
        #expect(throws: RetrievalError("b.bin: binary file (NUL bytes), skipped")) {
            try CorpusReader.text(Data([0x41, 0x00, 0x42]), file: "b.bin")
        }
        #expect(throws: RetrievalError("l.txt: not valid UTF-8, skipped")) {
            try CorpusReader.text(Data([0x41, 0xFF, 0xFE]), file: "l.txt")
        }
    }

    @Test func wordWindowsOverlapAndKeepByteOffsets() {
        let body = "one two  three four five"
        let ranges = Chunker.words(size: 3, overlap: 1).ranges(body)
        let bytes = Array(body.utf8)
        #expect(ranges.map { String(decoding: bytes[$0], as: UTF8.self) } == ["one two  three", "three four five"])
        #expect(Chunker.document.ranges(body) == [0..<bytes.count])
        #expect(Chunker.words(size: 10, overlap: 2).ranges("") == [])
    }

    @Test func markdownStartsAChunkAtEveryHeading() {
        let body = "# Title\n\nIntro para.\n\nSecond para.\n\n## Part\n\nBody text here.\n"
        let bytes = Array(body.utf8)
        let chunks = Chunker.markdown(maxWords: 50).ranges(body).map { String(decoding: bytes[$0], as: UTF8.self) }
        #expect(chunks == ["# Title\n\nIntro para.\n\nSecond para.", "## Part\n\nBody text here."])
        let small = Chunker.markdown(maxWords: 4).ranges(body).map { String(decoding: bytes[$0], as: UTF8.self) }
        #expect(small == ["# Title\n\nIntro para.", "Second para.", "## Part", "Body text here."])
    }

    /// A `# comment` after a blank line inside a fenced code block is code, not a heading: the
    /// fence stays in its section's chunk; `#hashtag` is no heading either.
    @Test func markdownHeadingsInsideCodeFencesDoNotStartChunks() {
        let body =
            "## Setup\n\nRun:\n\n```bash\nmake\n\n# then test\nmake test\n```\n\n#hashtag line\n\n## Use\n\nGo.\n"
        let bytes = Array(body.utf8)
        let chunks = Chunker.markdown(maxWords: 50).ranges(body).map { String(decoding: bytes[$0], as: UTF8.self) }
        #expect(
            chunks == [
                "## Setup\n\nRun:\n\n```bash\nmake\n\n# then test\nmake test\n```\n\n#hashtag line", "## Use\n\nGo.",
            ])
    }

    @Test func bm25BlobRoundTripsAndABrokenOneIsRefused() {
        let index = BM25Index(
            documents: [["wing", "flutter"], ["heat"], []], parameters: .init(k1: 0.9, b: 0.4))
        let data = index.serialized()
        let back = BM25Index(serialized: data)
        #expect(back?.parameters == index.parameters)
        #expect(back?.scores(["wing", "heat"]) == index.scores(["wing", "heat"]))
        #expect(BM25Index(serialized: data.dropLast(3)) == nil)
        var wrong = data
        wrong[0] ^= 0xFF
        #expect(BM25Index(serialized: wrong) == nil)
        #expect(BM25Index(serialized: data + Data([1])) == nil)
        // A posting list whose documents do not ascend is damage (the queries walk them in order).
        let twice = BM25Index(documents: [["wing"], ["wing"]]).serialized()
        var swapped = twice
        let first = twice.count - 16  // the last two postings: (document, frequency) each
        swapped.replaceSubrange(first..<(first + 8), with: twice[(first + 8)..<(first + 16)])
        swapped.replaceSubrange((first + 8)..<(first + 16), with: twice[first..<(first + 8)])
        #expect(BM25Index(serialized: twice) != nil)
        #expect(BM25Index(serialized: swapped) == nil)
    }

    @Test func flatSearchIsCosineOnUnitVectors() {
        var index = FlatIndex(dimensions: 2)
        index.add([1, 0])
        index.add([0, 1])
        index.add([0.6, 0.8])
        #expect(index.search([0.8, 0.6], k: 2).map(\.index) == [2, 0])
        // MMR skips the near-duplicate of the first pick.
        let picked = MMR.rerank(
            query: [1, 0], candidates: [(0, [1, 0]), (1, [0.99, 0.141]), (2, [0.6, 0.8])], k: 2, lambda: 0.3)
        #expect(picked == [0, 2])
    }
}
