import Foundation
import LoupeModels
import Testing

/// The tokenizer on a small vocabulary built here: the GPT-2 byte alphabet, three control
/// tokens and a few merges whose outcome can be worked out by hand.
struct BPETokenizerTests {
    /// GPT-2's printable stand-in for each byte, written out independently of the tokenizer's own.
    static let byteSpellings: [String] = {
        var shifted = 0
        return (0..<256).map { byte in
            if (33...126).contains(byte) || (161...172).contains(byte) || byte >= 174 {
                return String(UnicodeScalar(UInt8(byte)))
            }
            defer { shifted += 1 }
            return String(UnicodeScalar(UInt32(256 + shifted))!)
        }
    }()

    static let controls = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    static let merges = ["a a", "b c", "a b", "Ġ w", "Ġw o", "aa aa", "Ġ Ġ", "! !"]
    static let merged = ["aa", "bc", "ab", "Ġw", "Ġwo", "aaaa", "ĠĠ", "!!"]

    static func tokenizer(pre: String = "smollm") throws -> BPETokenizer {
        let tokens = controls + byteSpellings + merged
        let types = controls.map { _ in 3 } + Array(repeating: 1, count: byteSpellings.count + merged.count)
        return try BPETokenizer(tokens: tokens, merges: merges, types: types, pre: pre, eos: 2)
    }

    /// The id of byte `byte` (the byte tokens follow the three controls in byte order).
    static func byte(_ byte: UInt8) -> Int32 { 3 + Int32(byte) }
    static func merge(_ token: String) -> Int32 { 259 + Int32(merged.firstIndex(of: token)!) }

    @Test func theLowestRankMergesFirstAndEqualRanksGoLeftFirst() throws {
        let tokenizer = try Self.tokenizer()
        #expect(tokenizer.encode("aaa") == [Self.merge("aa"), Self.byte(0x61)])
        #expect(tokenizer.encode("aaaa") == [Self.merge("aaaa")])
        // "b c" (rank 1) before "a b" (rank 2): a | bc.
        #expect(tokenizer.encode("abc") == [Self.byte(0x61), Self.merge("bc")])
        #expect(tokenizer.encode("ab") == [Self.merge("ab")])
        #expect(tokenizer.encode(" wo") == [Self.merge("Ġwo")])
        #expect(tokenizer.encode("é") == [Self.byte(0xC3), Self.byte(0xA9)])
        #expect(tokenizer.encode("") == [])
    }

    @Test func specialTokensAreMatchedOnlyWhenAsked() throws {
        let tokenizer = try Self.tokenizer()
        let text = "a<|im_end|>b"
        #expect(tokenizer.encode(text, parseSpecial: true) == [Self.byte(0x61), 2, Self.byte(0x62)])
        let plain = tokenizer.encode(text)
        #expect(!plain.contains { tokenizer.isControl($0) })
        #expect(tokenizer.decode(plain) == text)
        // Leftmost first, then the longest at that position; a partial spelling is text.
        #expect(tokenizer.encode("<|im_start|><|im_end|>", parseSpecial: true) == [1, 2])
        #expect(!tokenizer.encode("<|im_end", parseSpecial: true).contains(2))
    }

    /// The pieces match what Hugging Face's pre-tokenizers give (checked with tokenizers 0.23.3).
    @Test(arguments: [
        ("Hello world", ["Hello", " world"], ["Hello", " world"]),
        ("a  b", ["a", " ", " b"], ["a", " ", " b"]),
        ("a\n\nb", ["a", "\n", "\n", "b"], ["a", "\n", "\n", "b"]),
        ("a  ", ["a", "  "], ["a", "  "]),
        ("a \n b", ["a", " \n", " b"], ["a", " \n", " b"]),
        ("I'll it's", ["I", "'ll", " it", "'s"], ["I", "'ll", " it", "'s"]),
        ("'Steve", ["'", "Steve"], ["'", "Steve"]),
        (" 2024", [" ", "2", "0", "2", "4"], [" 2024"]),
        ("$3.14", ["$", "3", ".", "1", "4"], ["$", "3", ".", "14"]),
        ("x\t\ty", ["x", "\t", "\t", "y"], ["x", "\t", "\t", "y"]),
        ("héllo wörld", ["héllo", " wörld"], ["héllo", " wörld"]),
        ("日本語テキスト", ["日本語テキスト"], ["日本語テキスト"]),
        ("👍🏽!", ["👍🏽!"], ["👍🏽!"]),
        ("a\u{A0}b", ["a", "\u{A0}", "b"], ["a", "\u{A0}", "b"]),
        ("١٢ ab", ["١", "٢", " ab"], ["١٢", " ab"]),
    ])
    func piecesFollowTheRegex(text: String, smollm: [String], gpt2: [String]) throws {
        #expect(try Self.tokenizer(pre: "smollm").pieces(text) == smollm)
        #expect(try Self.tokenizer(pre: "gpt2").pieces(text) == gpt2)
    }

    /// SmolLM2 has no token for 21 bytes (0x04, 0xF5...); like Hugging Face's BPE, the tokenizer
    /// leaves such bytes out before merging, so their neighbours can merge.
    @Test func bytesWithoutATokenAreLeftOut() throws {
        var tokens = Self.controls + Self.byteSpellings + Self.merged
        tokens[Int(Self.byte(0x04))] = "<unused>"
        let tokenizer = try BPETokenizer(tokens: tokens, merges: Self.merges, pre: "gpt2")
        #expect(tokenizer.encode("\u{4}") == [])
        #expect(tokenizer.encode("a\u{4}a") == [Self.byte(0x61), Self.byte(0x61)])
        #expect(tokenizer.encode("!\u{4}!") == [Self.merge("!!")])
    }

    @Test func decodingInvertsEncoding() throws {
        let tokenizer = try Self.tokenizer()
        for text in ["aaa abc  wo", "naïve 👨‍👩‍👧 \r\n\t 12", "<|im_start|>x", "\u{0}\u{7F}"] {
            #expect(tokenizer.decode(tokenizer.encode(text)) == text)
            #expect(tokenizer.decode(tokenizer.encode(text, parseSpecial: true), renderSpecial: true) == text)
        }
        #expect(tokenizer.decode([1, Self.byte(0x61), 2]) == "a")
        #expect(tokenizer.decode([1, Self.byte(0x61), 2], renderSpecial: true) == "<|im_start|>a<|im_end|>")
        #expect(tokenizer.decodeBytes([Self.byte(0xC3)]) == [0xC3])
        #expect(tokenizer.decode([Self.byte(0xC3)]) == "\u{FFFD}")
    }

    @Test func theStreamDecoderHoldsBackUnfinishedCharacters() throws {
        let tokenizer = try Self.tokenizer()
        var decoder = BPETokenizer.StreamDecoder(tokenizer)
        let ids = tokenizer.encode("é🙂a")  // 2 + 4 + 1 byte tokens
        #expect(ids.count == 7)
        #expect(ids.map { decoder.append($0) } == ["", "é", "", "", "", "🙂", "a"])
        #expect(decoder.finish() == "")
        // An unfinished character at the end comes out as U+FFFD; an invalid byte at once.
        #expect(decoder.append(Self.byte(0xF0)) == "")
        #expect(decoder.finish() == "\u{FFFD}")
        #expect(decoder.append(Self.byte(0xFF)) == "\u{FFFD}")
        #expect(decoder.append(Self.byte(0xE2)) == "")
        #expect(decoder.append(Self.byte(0x41)) == "\u{FFFD}A")
    }

    @Test func piecesForDisplayShowBytesThatAreNotText() throws {
        let tokenizer = try Self.tokenizer()
        #expect(tokenizer.piece(Self.byte(0x20)) == " ")
        #expect(tokenizer.piece(Self.merge("Ġwo")) == " wo")
        #expect(tokenizer.piece(Self.byte(0xC3)) == "<0xC3>")
        #expect(tokenizer.piece(1) == "<|im_start|>")
        #expect(tokenizer.piece(-1) == "<invalid id -1>")
    }

    @Test func endOfGenerationIsEOSAndTheEndTokens() throws {
        #expect(try Self.tokenizer().endOfGenerationIDs == [0, 2])
    }

    @Test func badVocabulariesAreRefusedByName() throws {
        func message(_ make: () throws -> BPETokenizer) -> String {
            do {
                _ = try make()
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        let tokens = Self.controls + Self.byteSpellings + Self.merged
        #expect(message { try Self.tokenizer(pre: "llama3") }.contains("unknown pre-tokenizer 'llama3'"))
        #expect(message { try BPETokenizer(tokens: Self.controls, merges: [], pre: "gpt2") }.contains("no byte tokens"))
        #expect(message { try BPETokenizer(tokens: tokens, merges: ["a zz"], pre: "gpt2") }.contains("merge 0 'a zz'"))
        #expect(
            message { try BPETokenizer(tokens: tokens, merges: ["a c"], pre: "gpt2") }
                .contains("makes a token not in the vocabulary"))
        #expect(
            message { try BPETokenizer(tokens: tokens, merges: [], types: [1], pre: "gpt2") }
                .contains("tokenizer.ggml.token_type"))
        #expect(
            message { try BPETokenizer(tokens: tokens, merges: [], pre: "gpt2", eos: 70_000) }
                .contains("tokenizer.ggml.eos_token_id"))
    }
}

/// SmolLM2's real vocabulary against Hugging Face `tokenizers` built from the same GGUF
/// (`scripts/reference/smollm2_tokenizer.py`), over the committed corpus
/// `Fixtures/tokenizer-corpus.jsonl` (its README says where each part comes from).
@Suite(.enabled(if: SmolLM2Fixtures.modelPath != nil, "SmolLM2 GGUF not found: run scripts/fetch-smollm2"))
struct BPETokenizerParityTests {
    /// Loupe's GGUF reader and PyPI `gguf` read the same vocabulary, merges, types and template.
    @Test func theGGUFReadsAsTheReferenceReadsIt() throws {
        let file = try SmolLM2Fixtures.file()
        let reference = try SmolLM2Fixtures.vocabulary()
        #expect(try file.strings("tokenizer.ggml.tokens") == reference.tokens)
        #expect(try file.strings("tokenizer.ggml.merges") == reference.merges)
        #expect(try file.integers("tokenizer.ggml.token_type") == reference.types)
        #expect(try file.string("tokenizer.ggml.pre") == reference.pre)
        #expect(try file.integer("tokenizer.ggml.eos_token_id") == reference.eos)
        #expect(try ChatTemplate(file: file) == .smolLM2)
        #expect(try BPETokenizer(file: file).preTokenizer == .smollm)
    }

    @Test func theResearchVectorsHold() throws {
        let tokenizer = try SmolLM2Fixtures.tokenizer()
        #expect(tokenizer.encode(" 2024") == [216, 34, 32, 34, 36])
        // SmolLM2 has no token for byte 0x04: Hugging Face leaves it out and merges "!!";
        // llama.cpp (llama-cpp-python 0.3.36) leaves it out after merging: [17, 17]. Loupe follows HF.
        #expect(tokenizer.encode("!\u{4}!") == [10095])
        #expect(tokenizer.endOfGenerationIDs == [0, 2])
        #expect(tokenizer.count == 49152)
    }

    @Test(arguments: [
        (pre: "smollm", parseSpecial: true), (pre: "smollm", parseSpecial: false), (pre: "gpt2", parseSpecial: true),
    ])
    func everyCorpusLineMatchesTheReference(pre: String, parseSpecial: Bool) throws {
        let tokenizer = try SmolLM2Fixtures.tokenizer(pre: pre)
        let texts = try SmolLM2Fixtures.corpus()
        #expect(texts.count >= 5000)
        var arguments = ["--jsonl", "--pre", pre]
        if !parseSpecial { arguments.append("--plain-special") }
        let expected = try SmolLM2Fixtures.referenceIDs(arguments, input: SmolLM2Fixtures.corpusPath)
        try #require(expected.count == texts.count, "the reference gave \(expected.count) lines for \(texts.count)")
        var mismatches: [String] = []
        var roundTrips: [String] = []
        for (index, text) in texts.enumerated() {
            let ids = tokenizer.encode(text, parseSpecial: parseSpecial)
            if ids != expected[index] {
                mismatches.append(
                    "line \(index + 1) \(String(text.prefix(50)).debugDescription): "
                        + "ours \(ids.prefix(16)) reference \(expected[index].prefix(16))")
            }
            if tokenizer.decode(ids, renderSpecial: true) != text
                || (!parseSpecial && ids.contains(where: tokenizer.isControl))
            {
                roundTrips.append("line \(index + 1) \(String(text.prefix(50)).debugDescription)")
            }
        }
        #expect(
            mismatches.isEmpty, "\(mismatches.count) lines differ:\n\(mismatches.prefix(8).joined(separator: "\n"))")
        #expect(
            roundTrips.isEmpty,
            "\(roundTrips.count) lines do not decode back:\n\(roundTrips.prefix(8).joined(separator: "\n"))")
    }

    /// Streaming every corpus line a token at a time gives the same text as decoding it whole.
    @Test func streamingDecodesLikeDecodingWhole() throws {
        let tokenizer = try SmolLM2Fixtures.tokenizer()
        var differing: [Int] = []
        for (index, text) in try SmolLM2Fixtures.corpus().enumerated() {
            var decoder = BPETokenizer.StreamDecoder(tokenizer, renderSpecial: true)
            var streamed = ""
            for id in tokenizer.encode(text, parseSpecial: true) { streamed += decoder.append(id) }
            streamed += decoder.finish()
            if streamed != text { differing.append(index + 1) }
        }
        #expect(differing.isEmpty, "lines \(differing.prefix(10)) stream differently")
    }
}

/// The SmolLM2 model file, its vocabulary as the Python reference reads it, and the corpus.
enum SmolLM2Fixtures {
    static let modelPath: String? = {
        let environment = ProcessInfo.processInfo.environment
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
        let path = root + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let corpusPath = repositoryRoot.appendingPathComponent(
        "Tests/LoupeModelsTests/Fixtures/tokenizer-corpus.jsonl"
    ).path

    struct Vocabulary: Decodable {
        var tokens: [String]
        var merges: [String]
        var types: [Int]
        var pre: String
        var eos: Int
        var chatTemplate: String

        enum CodingKeys: String, CodingKey {
            case tokens, merges, types, pre, eos
            case chatTemplate = "chat_template"
        }
    }

    struct ReferenceFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `scripts/reference/smollm2_tokenizer.py` on the model file with `arguments`, stdin from
    /// the file `input`, and returns its standard output.
    static func runReference(_ arguments: [String], input: String? = nil) throws -> Data {
        let python = repositoryRoot.appendingPathComponent(".venv-peers/bin/python").path
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the Python peers are missing: run scripts/python-peers first")
        let model = try #require(modelPath, "SmolLM2 GGUF not found: run scripts/fetch-smollm2")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        let script = repositoryRoot.appendingPathComponent("scripts/reference/smollm2_tokenizer.py").path
        process.arguments = [script, "--gguf", model] + arguments
        if let input { process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input)) }
        let output = Pipe()
        // Errors go to a file: the output pipe is read to its end first, and a full error pipe
        // would stall the script meanwhile.
        let errorsURL = FileManager.default.temporaryDirectory.appendingPathComponent("smollm2-\(UUID()).err")
        FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsURL) }
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let errors = (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? ""
            throw ReferenceFailure(description: "smollm2_tokenizer.py exited \(process.terminationStatus): \(errors)")
        }
        return data
    }

    /// The reference's ids, one list per input line.
    static func referenceIDs(_ arguments: [String], input: String) throws -> [[Int32]] {
        let data = try runReference(arguments, input: input)
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            guard let ids = try JSONSerialization.jsonObject(with: Data(line)) as? [Int] else {
                throw ReferenceFailure(description: "not a list of ids: \(String(decoding: line, as: UTF8.self))")
            }
            return ids.map(Int32.init)
        }
    }

    private static let vocabularyResult = Result { () throws -> Vocabulary in
        try JSONDecoder().decode(Vocabulary.self, from: runReference(["--dump-vocabulary"]))
    }

    static func vocabulary() throws -> Vocabulary { try vocabularyResult.get() }

    /// The model file, opened once.
    private static let fileResult = Result { () throws -> GGUFFile in
        try GGUFFile(path: try #require(modelPath, "SmolLM2 GGUF not found: run scripts/fetch-smollm2"))
    }

    static func file() throws -> GGUFFile { try fileResult.get() }

    /// The tokenizer as Loupe reads it from the GGUF, or built from the same metadata but with
    /// another pre-tokenizer.
    static func tokenizer(pre: String? = nil) throws -> BPETokenizer {
        let file = try file()
        guard let pre, try pre != file.string("tokenizer.ggml.pre") else { return try BPETokenizer(file: file) }
        return try BPETokenizer(
            tokens: file.strings("tokenizer.ggml.tokens"), merges: file.strings("tokenizer.ggml.merges"),
            types: file.integers("tokenizer.ggml.token_type"), pre: pre,
            eos: file.integer("tokenizer.ggml.eos_token_id"), source: file.fileName)
    }

    /// The corpus texts, one JSON string per line.
    static func corpus() throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: corpusPath))
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            // Not JSONSerialization: it drops a U+FEFF that begins the data, taking it for a byte order mark.
            try JSONDecoder().decode(String.self, from: Data(line))
        }
    }
}
