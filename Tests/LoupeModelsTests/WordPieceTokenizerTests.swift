import LoupeModels
import Testing

@Suite struct WordPieceTokenizerTests {
    let tokenizer = try! WordPieceTokenizer(
        vocabulary: [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", ",", ".", "!", "中", "文", "a", "##b",
            "run", "##ning", "$",
        ],
        maxTokens: 8
    )

    private func tokens(_ text: String) -> [String] { tokenizer.tokens(tokenizer.wordPieces(text)) }

    @Test func splitsIntoLongestPiecesWithContinuationPrefixes() {
        #expect(tokens("unaffable running") == ["un", "##aff", "##able", "run", "##ning"])
        #expect(tokens("ab") == ["a", "##b"])
    }

    @Test func lowercasesAndStripsAccents() {
        #expect(tokens("CAFÉ Café cafe\u{301}") == ["cafe", "cafe", "cafe"])
    }

    @Test func punctuationAndSymbolsBecomeTheirOwnWords() {
        #expect(tokens("cafe,cafe!$a.") == ["cafe", ",", "cafe", "!", "$", "a", "."])
    }

    @Test func cjkIdeographsAreSplitCharacterByCharacter() {
        #expect(tokens("中文a") == ["中", "文", "a"])
    }

    @Test func unknownWordsAndOverlongWordsAreUNK() {
        #expect(tokens("zzz unx") == ["[UNK]", "[UNK]"])
        #expect(tokens(String(repeating: "a", count: 101)) == ["[UNK]"])
    }

    @Test func controlCharactersAreDroppedAndWhitespaceSplits() {
        #expect(tokens("a\u{0}b\u{200B}\tcafe\ncafe") == ["a", "##b", "cafe", "cafe"])
    }

    @Test func encodeAddsSpecialTokensAndTruncates() {
        #expect(tokenizer.tokens(tokenizer.encode("cafe")) == ["[CLS]", "cafe", "[SEP]"])
        let long = tokenizer.encode(Array(repeating: "cafe", count: 20).joined(separator: " "))
        #expect(long.count == 8)
        #expect(long.first == tokenizer.classifierID)
        #expect(long.last == tokenizer.separatorID)
    }

    /// The bounded form reads the text in windows cut at whitespace; what it returns must be the
    /// prefix of the whole text's pieces, whatever falls on a window's edge (a control-character
    /// "whitespace" like U+0085 that normalisation drops, accents, CJK, a final sigma, a long word).
    @Test func theBoundedFormIsThePrefixOfTheWholeText() {
        let words = [
            "unaffable", "CAFÉ", "cafe\u{301}", "ab\u{85}ab", "中文", "ΟΔΟΣ", "a,b", "$", "zzz",
            String(repeating: "a", count: 300), "run\u{200B}ning", "\u{0}", "a\u{2028}b",
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4 {
            let separators = [" ", "\t", "\n", "\r\n", "  ", "\u{3000}", "\u{85}"]
            let text = (0..<1500).map { _ in
                words.randomElement(using: &generator)! + separators.randomElement(using: &generator)!
            }.joined()
            let whole = tokenizer.wordPieces(text)
            for limit in [1, 7, 510, 2000, whole.count, whole.count + 5] {
                #expect(tokenizer.wordPieces(text, atMost: limit) == Array(whole.prefix(limit)), "limit \(limit)")
            }
        }
    }

    @Test func aVocabularyWithoutSpecialTokensIsRefused() {
        let error = #expect(throws: ModelError.self) { try WordPieceTokenizer(vocabulary: ["a", "b"]) }
        #expect(error?.description == "vocab.txt: has no [UNK] token")
    }
}
