import Foundation
import LoupeBase
import LoupeModels
import LoupeTensor
import Testing

/// `LlamaConfiguration` read from small GGUF files written here (F32 tensors of a 2-layer model
/// of width 64): the values, and an error naming the key or tensor for each way a file can be
/// wrong.
struct LlamaConfigurationTests {
    @Test func readsTheLlamaKeys() throws {
        let file = try TinyLlama.write()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let configuration = try LlamaConfiguration(file: try GGUFFile(path: file))
        #expect(
            configuration
                == LlamaConfiguration(
                    layers: 2, width: 64, feedForwardWidth: 96, heads: 4, keyValueHeads: 2, contextLength: 32,
                    ropeBase: 10000, ropeDimensions: 16, rmsEpsilon: 1e-5, vocabularySize: 40))
        #expect(configuration.headSize == 16 && configuration.groupSize == 2 && configuration.keyValueWidth == 32)
    }

    @Test(arguments: [
        (TinyLlama.Change.metadata("general.architecture", .string("gpt2")), "general.architecture is 'gpt2'"),
        (.metadata("llama.attention.head_count", .uint32(5)), "llama.embedding_length 64 is not a multiple of"),
        (.metadata("llama.attention.head_count_kv", .uint32(3)), "llama.attention.head_count 4 is not a multiple"),
        (.metadata("llama.block_count", .string("two")), "llama.block_count: is a string, not an integer"),
        (.removeMetadata("llama.rope.freq_base"), "llama.rope.freq_base: missing"),
        (.metadata("llama.vocab_size", .uint32(41)), "tensor 'token_embd.weight': has shape [64, 40]"),
        (.shape("blk.1.attn_k.weight", [64, 30]), "tensor 'blk.1.attn_k.weight': has shape [64, 30]; the "),
        (.shape("blk.0.ffn_down.weight", [64, 96]), "needs [96, 64]"),
        (.removeTensor("blk.1.ffn_up.weight"), "tensor 'blk.1.ffn_up.weight': is missing"),
    ])
    func aWrongFileIsAnErrorNamingWhatIsWrong(change: TinyLlama.Change, message: String) throws {
        let file = try TinyLlama.write(change)
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            _ = try LlamaConfiguration(file: try GGUFFile(path: file))
            Issue.record("\(change) was accepted")
        } catch {
            #expect(error.description.contains(message), "\(error)")
            #expect(error.description.hasPrefix((file as NSString).lastPathComponent), "\(error)")
        }
    }

    /// On random weights, decoding through the cache, batching and rewinding the cache give the
    /// prefill's logits.
    @Test func tinyModelDecodesAndBatchesLikeItsPrefill() throws {
        let file = try TinyLlama.write()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let model = try LlamaModel(path: file)
        let ids: [Int32] = [1, 5, 9, 33, 2, 17, 39, 0, 12, 8]
        let whole = try model.logits(for: ids)
        #expect(whole.shape == [10, 40] && whole.storage.allSatisfy(\.isFinite))
        var caches = [try model.makeCache(context: 32), try model.makeCache(context: 32)]
        let first = try model.forward([Array(ids[..<6]), [3, 4]], caches: &caches, logits: .all)
        var worst = zip(first[0].storage, whole.storage[..<(6 * 40)]).map { abs($0 - $1) }.max() ?? .infinity
        for position in 6..<10 {
            let step = try model.forward([[ids[position]], []], caches: &caches)
            #expect(step[1].shape == [0, 40])
            worst = max(worst, zip(step[0].storage, whole.row(position)).map { abs($0 - $1) }.max() ?? .infinity)
        }
        #expect(worst <= 1e-5, "max |Δlogit| \(worst)")
        #expect(caches.map(\.count) == [10, 2])
        // Rewound to 6 tokens, the cache reads the last 4 again as if they were new.
        caches[0].truncate(to: 6)
        #expect(caches[0].count == 6 && caches[0].remaining == 26)
        let again = try model.forward(Array(ids[6...]), cache: &caches[0], logits: .all)
        worst = zip(again.storage, whole.storage[(6 * 40)...]).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= 1e-5, "after truncate: max |Δlogit| \(worst)")
        let alone = try model.logits(for: [3, 4])
        #expect(zip(first[1].storage, alone.storage).allSatisfy { abs($0 - $1) <= 1e-5 })
    }
}

/// Writes a GGUF v3 file of a small `llama` model: 2 layers, width 64, 4 heads on 2 KV heads,
/// SwiGLU of 96, vocabulary 40, F32 weights from a seeded generator.
enum TinyLlama {
    enum Value: Sendable, CustomStringConvertible {
        case string(String)
        case uint32(UInt32)
        case float32(Float)
        var description: String {
            switch self {
            case .string(let text): "'\(text)'"
            case .uint32(let number): "\(number)"
            case .float32(let number): "\(number)"
            }
        }
    }

    enum Change: Sendable, CustomStringConvertible {
        case metadata(String, Value)
        case removeMetadata(String)
        case shape(String, [Int])
        case removeTensor(String)
        var description: String {
            switch self {
            case .metadata(let key, let value): "\(key) = \(value)"
            case .removeMetadata(let key): "no \(key)"
            case .shape(let name, let dimensions): "\(name) of \(dimensions)"
            case .removeTensor(let name): "no \(name)"
            }
        }
    }

    static func write(_ changes: Change...) throws -> String {
        var metadata: [(String, Value)] = [
            ("general.architecture", .string("llama")), ("llama.block_count", .uint32(2)),
            ("llama.context_length", .uint32(32)), ("llama.embedding_length", .uint32(64)),
            ("llama.feed_forward_length", .uint32(96)), ("llama.attention.head_count", .uint32(4)),
            ("llama.attention.head_count_kv", .uint32(2)), ("llama.rope.freq_base", .float32(10000)),
            ("llama.attention.layer_norm_rms_epsilon", .float32(1e-5)), ("llama.vocab_size", .uint32(40)),
        ]
        var tensors: [(String, [Int])] = [("token_embd.weight", [64, 40]), ("output_norm.weight", [64])]
        for layer in 0..<2 {
            let p = "blk.\(layer)."
            tensors += [
                (p + "attn_norm.weight", [64]), (p + "attn_q.weight", [64, 64]), (p + "attn_k.weight", [64, 32]),
                (p + "attn_v.weight", [64, 32]), (p + "attn_output.weight", [64, 64]), (p + "ffn_norm.weight", [64]),
                (p + "ffn_gate.weight", [64, 96]), (p + "ffn_up.weight", [64, 96]), (p + "ffn_down.weight", [96, 64]),
            ]
        }
        for change in changes {
            switch change {
            case .metadata(let key, let value):
                if let index = metadata.firstIndex(where: { $0.0 == key }) {
                    metadata[index].1 = value
                } else {
                    metadata.append((key, value))
                }
            case .removeMetadata(let key): metadata.removeAll { $0.0 == key }
            case .shape(let name, let dimensions):
                tensors[tensors.firstIndex { $0.0 == name }!].1 = dimensions
            case .removeTensor(let name): tensors.removeAll { $0.0 == name }
            }
        }
        var bytes = Data("GGUF".utf8)
        func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        func string(_ text: String) {
            integer(UInt64(text.utf8.count))
            bytes.append(contentsOf: Array(text.utf8))
        }
        integer(UInt32(3))
        integer(UInt64(tensors.count))
        integer(UInt64(metadata.count))
        for (key, value) in metadata {
            string(key)
            switch value {
            case .string(let text):
                integer(UInt32(8))
                string(text)
            case .uint32(let number):
                integer(UInt32(4))
                integer(number)
            case .float32(let number):
                integer(UInt32(6))
                integer(number.bitPattern)
            }
        }
        var offset = 0
        for (name, dimensions) in tensors {
            string(name)
            integer(UInt32(dimensions.count))
            for dimension in dimensions { integer(UInt64(dimension)) }
            integer(UInt32(0))  // F32
            integer(UInt64(offset))
            offset += (dimensions.reduce(1, *) * 4 + 31) / 32 * 32
        }
        while bytes.count % 32 != 0 { bytes.append(0) }
        var generator = SplitMix64(seed: 58)
        for (name, dimensions) in tensors {
            let count = dimensions.reduce(1, *)
            let isNorm = name.hasSuffix("norm.weight")
            for _ in 0..<count {
                let uniform = Float(generator.next() % 2001) / 1000 - 1  // -1...1
                integer((isNorm ? 1 + uniform / 4 : uniform / 4).bitPattern)
            }
            while bytes.count % 32 != 0 { bytes.append(0) }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tiny-llama-\(UUID().uuidString).gguf")
            .path
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }
}
