import Foundation
import LoupeRetrieval
import Testing

/// "Did you mean": the closest word the Cranfield index has to a misspelt query word.
@Suite struct VocabularyTests {
    static let index: BM25Index = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../sample-data/cranfield/corpus.jsonl").standardized
        struct Line: Decodable {
            var title: String?
            var text: String
        }
        let tokenizer = RetrievalTokenizer(stem: false)
        let text = (try? String(contentsOf: root, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        return BM25Index(documents: lines.map { tokenizer.terms(($0.title ?? "") + " " + $0.text) })
    }()

    @Test func aMisspeltWordGetsTheClosestIndexedOne() {
        #expect(Self.index.postings.count > 5000)
        #expect(Self.index.closestTerm(to: "hypersonc") == "hypersonic")
        #expect(Self.index.closestTerm(to: "transfr") == "transfer")
        // A swap of neighbours is one edit.
        #expect(Self.index.closestTerm(to: "bondary") == "boundary")
        #expect(Self.index.closestTerm(to: "lyaer") == "layer")
        // Indexed words, and words nothing is close to, get none.
        #expect(Self.index.closestTerm(to: "flutter") == nil)
        #expect(Self.index.closestTerm(to: "zzzzqqqq") == nil)
    }
}
