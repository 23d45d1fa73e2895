import Foundation
import Testing

/// `loupe models list / fetch / info` with MiniLM and SmolLM2-135M-Instruct, run as the real binary.
@Suite(.serialized) struct ModelsCommandTests {
    /// The real SmolLM2 cache (`$LOUPE_MODELS` or `~/.cache/loupe/models`).
    static let modelsRoot: String = {
        let environment = ProcessInfo.processInfo.environment
        return environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
    }()
    static let smolLM2Path = modelsRoot + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"

    @Test func listSaysWhichModelIsMissingAndHowToFetchIt() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let result = try TestEnvironment.run(
            ["models", "list", "--workspace", directory + "/w.sqlite"], environment: ["LOUPE_MODELS": directory])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(
            lines.contains("all-MiniLM-L6-v2  missing (run loupe models fetch minilm)  \(directory)/all-MiniLM-L6-v2"))
        #expect(
            lines.contains(
                "SmolLM2-135M-Instruct  missing (run loupe models fetch smollm2)  "
                    + "\(directory)/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"))
    }

    @Test func infoWithoutTheFileSaysHowToFetchIt() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let result = try TestEnvironment.run(
            ["models", "info", "smollm2", "--workspace", directory + "/w.sqlite"],
            environment: ["LOUPE_MODELS": directory])
        #expect(result.status == 1)
        #expect(result.error.contains("SmolLM2-135M-Instruct not found at \(directory)/SmolLM2-135M-Instruct/"))
        #expect(result.error.contains("run loupe models fetch smollm2"))
    }

    @Test func infoShowsTheRealFilesConfiguration() throws {
        try #require(
            FileManager.default.fileExists(atPath: Self.smolLM2Path),
            "SmolLM2 weights not found at \(Self.smolLM2Path): run scripts/fetch-smollm2")
        let directory = TestEnvironment.temporaryDirectory()
        let workspace = directory + "/w.sqlite"
        let result = try TestEnvironment.run(
            ["models", "info", "smollm2", "--workspace", workspace], environment: ["LOUPE_MODELS": Self.modelsRoot])
        #expect(result.status == 0, "\(result.error)")
        let lines = Set(result.output.split(separator: "\n").map(String.init))
        // The research brief's figures (gguf-py read the same file): /work/shared/research/local-llm.md §1.
        for expected in [
            "model         SmolLM2-135M-Instruct (Smollm2 135M 8k Lc100K Mix1 Ep2)",
            "format        GGUF v3, alignment 32, 33 metadata keys",
            "architecture  llama, 30 layers, width 576, FFN 1536",
            "attention     9 query heads, 3 key/value heads, head size 64",
            "context       8192 tokens, RoPE base 100000 over 64 dims, RMS-norm ε 1e-05",
            "vocabulary    49152 tokens (gpt2 BPE, pre-tokenizer smollm), 48900 merges, BOS 1, EOS 2",
            "chat template {% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
                + "{{ '<|im_start|>… (368 characters, 6 lines)",
            "tensors       272: 210 Q4_1, 61 F32, 1 Q8_0",
            "bytes         96576768 of tensor data (92.1 MiB), file 98362432 (93.8 MiB)",
            "parameters    134515008",
            "weights       sha256 b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)\n\(result.output)")
        }
        // info registers the model; list shows it beside its file's size.
        let list = try TestEnvironment.run(
            ["models", "list", "--workspace", workspace], environment: ["LOUPE_MODELS": Self.modelsRoot])
        #expect(list.output.contains("SmolLM2-135M-Instruct  present  \(Self.smolLM2Path)  93.8 MiB"))
        #expect(list.output.contains("registered  SmolLM2-135M-Instruct  134515008 parameters  sha256 b179c9523d0e…"))
    }

    @Test func fetchSmolLM2FindsTheCheckedCacheAndRegistersIt() throws {
        try #require(
            FileManager.default.fileExists(atPath: Self.smolLM2Path),
            "SmolLM2 weights not found at \(Self.smolLM2Path): run scripts/fetch-smollm2")
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let result = try TestEnvironment.run(
            ["models", "fetch", "smollm2", "--workspace", workspace], environment: ["LOUPE_MODELS": Self.modelsRoot])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("SmolLM2: cached in"))
        let list = try TestEnvironment.run(
            ["models", "list", "--workspace", workspace], environment: ["LOUPE_MODELS": Self.modelsRoot])
        #expect(list.output.contains("registered  SmolLM2-135M-Instruct  134515008 parameters"))
        #expect(!list.output.contains("registered  all-MiniLM-L6-v2"))
    }

    @Test func infoMakesTheFilesOwnTextSafeForTheTerminal() throws {
        let directory = TestEnvironment.temporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory + "/SmolLM2-135M-Instruct", withIntermediateDirectories: true)
        let pairs = [
            ("general.architecture", "llama\u{1B}]0;owned\u{07}"), ("general.name", "evil\u{1B}[2J"),
            ("tokenizer.chat_template", "first\u{9B}31m line\nsecond line"),
        ]
        try Data(Self.gguf(strings: pairs)).write(
            to: URL(fileURLWithPath: directory + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"))
        let result = try TestEnvironment.run(
            ["models", "info", "smollm2", "--workspace", directory + "/w.sqlite"],
            environment: ["LOUPE_MODELS": directory])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("model         SmolLM2-135M-Instruct (evil"))
        #expect(result.output.contains("architecture  llama"))
        #expect(result.output.contains("(26 characters, 2 lines)"))
        #expect(result.output.contains("tensors       0: "))
        for control in ["\u{1B}", "\u{07}", "\u{9B}"] {
            #expect(!result.output.contains(control), "\(control.unicodeScalars.first!.value) reached the terminal")
        }
    }

    /// A GGUF v3 file holding only string metadata and no tensors.
    static func gguf(strings pairs: [(String, String)]) -> [UInt8] {
        func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        func string(_ text: String) -> [UInt8] { u64(UInt64(text.utf8.count)) + Array(text.utf8) }
        var bytes = Array("GGUF".utf8) + u32(3) + u64(0) + u64(UInt64(pairs.count))
        for (key, value) in pairs { bytes += string(key) + u32(8) + string(value) }
        return bytes
    }
}
