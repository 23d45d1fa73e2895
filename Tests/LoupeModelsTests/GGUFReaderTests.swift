import Foundation
import LoupeModels
import Testing

/// The GGUF reader against files written by PyPI `gguf` (`scripts/fixtures/make-gguf.py`) and
/// against the real SmolLM2-135M-Instruct file as `gguf`'s own reader and `gguf.quants.dequantize`
/// see it (`scripts/reference/gguf_reference.py`). Dequantized values must match exactly: both
/// sides do the same float32 operations in the same order.
struct GGUFReaderTests {
    // MARK: Files written by gguf's GGUFWriter

    @Test func everyMetadataValueTypeReadsAsWritten() throws {
        let file = try GGUFFile(path: GGUFFixtures.path("all-types.gguf"))
        #expect(file.version == 3)
        #expect(file.alignment == 32)
        #expect(
            file.keys == [
                "general.architecture", "test.uint8", "test.int8", "test.uint16", "test.int16", "test.uint32",
                "test.int32", "test.float32", "test.bool", "test.string", "test.uint64", "test.int64",
                "test.float64", "test.array.int32", "test.array.string", "test.array.nested",
            ])
        let expected: [String: GGUFValue] = [
            "general.architecture": .string("llama"),
            "test.uint8": .uint8(200), "test.int8": .int8(-100), "test.uint16": .uint16(60000),
            "test.int16": .int16(-30000), "test.uint32": .uint32(4_000_000_000), "test.int32": .int32(-2_000_000_000),
            "test.float32": .float32(0.15625), "test.bool": .bool(true), "test.string": .string("héllo, wörld"),
            "test.uint64": .uint64(18_000_000_000_000_000_000), "test.int64": .int64(-9_000_000_000_000_000_000),
            "test.float64": .float64(2.718281828459045),
            "test.array.int32": .array([.int32(1), .int32(-2), .int32(3)]),
            "test.array.string": .array([.string("Ġ t"), .string("a"), .string("")]),
            "test.array.nested": .array([.array([.int32(1), .int32(2)]), .array([.int32(3)])]),
        ]
        #expect(file.metadata == expected)
        #expect(try file.string("general.architecture") == "llama")
        #expect(try file.integer("test.uint32") == 4_000_000_000)
        #expect(try file.integer("test.int8") == -100)
        #expect(try file.float("test.float32") == 0.15625)
        #expect(try file.float("test.float64") == Float(2.718281828459045))
        #expect(try file.strings("test.array.string") == ["Ġ t", "a", ""])
        #expect(try file.integers("test.array.int32") == [1, -2, 3])
    }

    @Test func typedReadsNameTheKeyAndWhatItHolds() throws {
        let file = try GGUFFile(path: GGUFFixtures.path("all-types.gguf"))
        func message(_ read: () throws -> Any) -> String {
            do {
                _ = try read()
                return "no error"
            } catch { return (error as? ModelError)?.description ?? "\(error)" }
        }
        #expect(message { try file.integer("llama.block_count") } == "all-types.gguf: llama.block_count: missing")
        #expect(
            message { try file.integer("test.string") } == "all-types.gguf: test.string: is a string, not an integer")
        #expect(
            message { try file.integer("test.uint64") }
                == "all-types.gguf: test.uint64: 18000000000000000000 does not fit a 64-bit signed integer")
        #expect(message { try file.string("test.uint8") } == "all-types.gguf: test.uint8: is a uint8, not a string")
        #expect(message { try file.float("test.int32") } == "all-types.gguf: test.int32: is an int32, not a float")
        #expect(
            message { try file.strings("test.array.int32") }
                == "all-types.gguf: test.array.int32[0]: is an int32, not a string")
        #expect(
            message { try file.integers("test.bool") }
                == "all-types.gguf: test.bool: is a bool, not an array of integers")
        #expect(message { try file.tensor("output.weight") } == "all-types.gguf: tensor 'output.weight': is missing")
    }

    @Test(arguments: ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1"])
    func tensorsDequantizeExactlyAsGGUFDoes(type: String) throws {
        let file = try GGUFFile(path: GGUFFixtures.path("all-types.gguf"))
        let reference = try #require(GGUFFixtures.allTypes["tensor.\(type)"])
        let tensor = try file.tensor("tensor.\(type)")
        #expect(tensor.type.name == reference.type)
        #expect(tensor.dimensions == reference.dimensions)
        #expect(tensor.rows == 3)
        #expect(tensor.elementCount == 192)
        #expect(tensor.offset % 32 == 0 && tensor.offset >= file.dataOffset)
        let values = try file.floats(tensor)
        #expect(values == reference.values.map { Float($0) })
        // Row by row gives the same values.
        var row = [Float](repeating: .nan, count: tensor.dimensions[0])
        for index in 0..<tensor.rows {
            row.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: index, into: $0.baseAddress!) }
            #expect(row == Array(values[(index * 64)..<((index + 1) * 64)]), "row \(index)")
        }
    }

    @Test func aCustomAlignmentPlacesTheDataOnIt() throws {
        let file = try GGUFFile(path: GGUFFixtures.path("aligned-64.gguf"))
        #expect(file.alignment == 64)
        #expect(file.dataOffset % 64 == 0)
        let first = try file.tensor("first")
        let second = try file.tensor("second")
        #expect(first.dimensions == [5] && first.rows == 1)
        #expect(second.offset == file.dataOffset + 64)
        #expect(try file.floats(first) == [0, 1, 2, 3, 4])
        #expect(try file.floats(second) == [0, -1, -2, -3, -4, -5, -6].map { Float($0) })
        #expect(file.bytes(second).count == 28)
    }

    @Test func aTypeLoupeDoesNotReadIsRefusedByNameOnlyWhenUsed() throws {
        let file = try GGUFFile(path: GGUFFixtures.path("q6k.gguf"))
        let tensor = try file.tensor("blk.0.ffn_down.weight")
        #expect(tensor.type == .q6_K && tensor.byteCount == 210 && tensor.dimensions == [256, 1])
        let expected =
            "q6k.gguf: tensor 'blk.0.ffn_down.weight': is Q6_K, which Loupe does not read yet "
            + "(it reads F32, F16, Q4_0, Q4_1, Q8_0, BF16)"
        let validation = #expect(throws: ModelError.self) { try file.validateSupported() }
        #expect(validation?.description == expected)
        let error = #expect(throws: ModelError.self) { try file.floats(tensor) }
        #expect(error?.description == expected)
    }

    @Test func everyGGMLTypeHasItsName() {
        #expect(GGMLType(rawValue: 14)?.name == "Q6_K")
        #expect(GGMLType(rawValue: 30)?.name == "BF16")
        #expect(GGMLType(rawValue: 4) == nil)
        #expect(Set(GGMLType.allCases.map(\.name)).count == GGMLType.allCases.count)
        #expect(GGMLType.q4_1.bytesPerBlock == 20 && GGMLType.q8_0.bytesPerBlock == 34)
        #expect(GGMLType.q6_K.blockSize == 256 && GGMLType.q6_K.bytesPerBlock == 210)
    }

    // MARK: The real SmolLM2-135M-Instruct file

    @Test func smolLM2HeaderAndMetadataMatchTheResearchBrief() throws {
        let file = try GGUFFixtures.smolLM2()
        #expect(file.version == 3)
        #expect(file.alignment == 32)
        #expect(file.metadata["general.alignment"] == nil)
        #expect(file.keys.count == 33)
        #expect(file.tensors.count == 272)
        #expect(file.dataOffset == 1_785_664)
        var counts: [String: Int] = [:]
        for tensor in file.tensors { counts[tensor.type.name, default: 0] += 1 }
        #expect(counts == ["Q4_1": 210, "Q8_0": 1, "F32": 61])
        #expect(try file.string("general.architecture") == "llama")
        #expect(try file.integer("llama.block_count") == 30)
        #expect(try file.integer("llama.embedding_length") == 576)
        #expect(try file.integer("llama.attention.head_count") == 9)
        #expect(try file.integer("llama.attention.head_count_kv") == 3)
        #expect(try file.float("llama.rope.freq_base") == 100_000)
        #expect(try file.float("llama.attention.layer_norm_rms_epsilon") == 1e-5)
        #expect(try file.strings("tokenizer.ggml.tokens").count == 49152)
        let merges = try file.strings("tokenizer.ggml.merges")
        #expect(merges.count == 48900)
        #expect(merges.first == "Ġ t")
        #expect(try file.integer("tokenizer.ggml.bos_token_id") == 1)
        #expect(try file.integer("tokenizer.ggml.eos_token_id") == 2)
        #expect(try file.integers("tokenizer.ggml.token_type").count == 49152)
        try file.validateSupported()
    }

    @Test func smolLM2AgreesWithGGUFsOwnReader() throws {
        let file = try GGUFFixtures.smolLM2()
        let reference = try GGUFFixtures.smolLM2Reference()
        #expect(Int(file.version) == reference.version)
        #expect(file.alignment == reference.alignment)
        #expect(file.keys == reference.keys)
        #expect(file.dataOffset == reference.dataOffset)
        for (key, value) in reference.scalars {
            let ours = try #require(file.metadata[key], "\(key) missing")
            switch value {
            case .string(let text): #expect(ours.stringValue == text, "\(key)")
            case .number(let number):
                if let integer = ours.integerValue {
                    #expect(Double(integer) == number, "\(key)")
                } else {
                    #expect(ours.floatValue.map(Double.init) == number, "\(key)")
                }
            case .bool(let flag): #expect(ours == .bool(flag), "\(key)")
            }
        }
        for (key, length) in reference.arrayLengths {
            guard case .array(let elements) = try file.value(key) else {
                Issue.record("\(key) is not an array")
                continue
            }
            #expect(elements.count == length, "\(key)")
        }
        #expect(file.tensors.count == reference.tensors.count)
        for (ours, theirs) in zip(file.tensors, reference.tensors) {
            #expect(ours.name == theirs.name)
            #expect(ours.type.name == theirs.type, "\(ours.name)")
            #expect(ours.dimensions == theirs.dimensions, "\(ours.name)")
            #expect(ours.offset == theirs.offset, "\(ours.name)")
            #expect(ours.byteCount == theirs.bytes, "\(ours.name)")
        }
    }

    @Test func smolLM2RowsDequantizeExactlyAsGGUFDoes() throws {
        let file = try GGUFFixtures.smolLM2()
        let reference = try GGUFFixtures.smolLM2Reference()
        #expect(reference.rows.count == 8)
        for row in reference.rows {
            let tensor = try file.tensor(row.tensor)
            var values = [Float](repeating: .nan, count: tensor.dimensions[0])
            values.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: row.row, into: $0.baseAddress!) }
            #expect(values == row.values.map { Float($0) }, "\(row.tensor) row \(row.row)")
        }
    }
}

/// Where the GGUF test files are, and the references they are compared with.
enum GGUFFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/gguf")
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    struct TensorValues: Decodable {
        var type: String
        var dimensions: [Int]
        var values: [Double]
    }

    /// all-types.json: each tensor's values as `gguf.quants.dequantize` gives them.
    static let allTypes: [String: TensorValues] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("all-types.json")) else { return [:] }
        return (try? JSONDecoder().decode([String: TensorValues].self, from: data)) ?? [:]
    }()

    /// `$LOUPE_MODELS/SmolLM2-135M-Instruct/…Q4_1.gguf`, else under `~/.cache/loupe/models`.
    static let smolLM2Path: String = {
        let environment = ProcessInfo.processInfo.environment
        let root =
            environment["LOUPE_MODELS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "") + "/.cache/loupe/models")
        return root + "/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
    }()

    private static let sharedSmolLM2: Result<GGUFFile, ModelError>? = {
        guard FileManager.default.fileExists(atPath: smolLM2Path) else { return nil }
        return Result { () throws(ModelError) in try GGUFFile(path: smolLM2Path) }
    }()

    /// The real file, opened once; a missing file fails the test saying how to fetch it.
    static func smolLM2() throws -> GGUFFile {
        let opened = try #require(
            sharedSmolLM2, "SmolLM2 weights not found at \(smolLM2Path): run scripts/fetch-smollm2")
        return try opened.get()
    }

    enum Scalar: Decodable {
        case string(String)
        case number(Double)
        case bool(Bool)

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    struct Reference: Decodable {
        struct Tensor: Decodable {
            var name: String
            var type: String
            var dimensions: [Int]
            var offset: Int
            var bytes: Int
        }
        struct Row: Decodable {
            var tensor: String
            var row: Int
            var values: [Double]
        }
        var version: Int
        var alignment: Int
        var keys: [String]
        var dataOffset: Int
        var scalars: [String: Scalar]
        var arrayLengths: [String: Int]
        var tensors: [Tensor]
        var rows: [Row]

        enum CodingKeys: String, CodingKey {
            case version, alignment, keys, scalars, tensors, rows
            case dataOffset = "data_offset"
            case arrayLengths = "array_lengths"
        }
    }

    private static let sharedReference: Result<Reference, GGUFReferenceFailure> = {
        let python = repositoryRoot.appendingPathComponent(".venv-peers/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return .failure(GGUFReferenceFailure(message: "\(python) is missing: run scripts/python-peers"))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            repositoryRoot.appendingPathComponent("scripts/reference/gguf_reference.py").path, smolLM2Path,
        ]
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch {
            return .failure(GGUFReferenceFailure(message: "cannot run \(python): \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(GGUFReferenceFailure(message: "gguf_reference.py exited \(process.terminationStatus)"))
        }
        do { return .success(try JSONDecoder().decode(Reference.self, from: data)) } catch {
            return .failure(GGUFReferenceFailure(message: "gguf_reference.py printed no reference: \(error)"))
        }
    }()

    /// gguf-py's view of the real file (the model must be present: ``smolLM2()`` first).
    static func smolLM2Reference() throws -> Reference { try sharedReference.get() }
}

struct GGUFReferenceFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
