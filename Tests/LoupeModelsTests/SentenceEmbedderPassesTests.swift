import LoupeModels
import Testing

@Suite struct SentenceEmbedderPassesTests {
    @Test func aBatchIsCutIntoRunsOfAtMost256PaddedRows() {
        // Sorted lengths as a batch arrives: 8 of 30 fit (240 rows), the ninth would make 270.
        let sentences = Array(repeating: 30, count: 20)
        #expect(SentenceEmbedder.passes(sentences) == [0..<8, 8..<16, 16..<20])
        // The longest so far sets the padding: 100, 100 fit (200), a third of 100 would not.
        #expect(SentenceEmbedder.passes([10, 100, 100, 100]) == [0..<2, 2..<4])
        // A sequence longer than a pass still gets one, alone.
        #expect(SentenceEmbedder.passes([256, 256, 300]) == [0..<1, 1..<2, 2..<3])
        #expect(SentenceEmbedder.passes([]) == [])
        // Every sequence is in exactly one pass, in order.
        let lengths = (0..<97).map { 5 + $0 * 3 }
        #expect(SentenceEmbedder.passes(lengths).flatMap { $0 } == Array(0..<97))
    }
}
