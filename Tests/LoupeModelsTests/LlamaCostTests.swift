import LoupeModels
import LoupeTensor
import Testing

/// A profiled forward pass of SmolLM2-135M-Instruct (q8) records each operation's FLOPs and bytes
/// as counted here by hand from the file's shapes (research brief local-llm.md §1): 30 layers,
/// width 576, 9 query heads and 3 key/value heads of 64, feed-forward 1536, vocabulary 49152;
/// every layer matrix Q4_1 (20 bytes a block of 32), the tied head and embedding Q8_0 (34 bytes).
///
/// Needs the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized)
struct LlamaCostTests {
    /// One operation's expected totals over a pass.
    struct Expected {
        var calls: Int
        var flops: Double
        var bytes: Double
    }

    /// The hand count for `t` new tokens after `p` cached ones, logits for the last row only.
    static func handCount(tokens t: Double, past p: Double) -> [String: Expected] {
        let (layers, width, kv, hidden, heads, d, vocabulary) = (30.0, 576.0, 192.0, 1536.0, 9.0, 64.0, 49152.0)
        let q41 = 20.0 / 32
        let q80 = 34.0 / 32
        let quantizeInput = 4 + 1.5  // read as float, written as 8-bit blocks
        func product(_ outputs: Double, _ inputs: Double, rows: Double, bytesPerWeight: Double) -> (Double, Double) {
            (
                2 * rows * inputs * outputs,
                outputs * inputs * bytesPerWeight + rows * inputs * quantizeInput + 4 * rows * outputs
            )
        }
        let qkv = product(width + 2 * kv, width, rows: t, bytesPerWeight: q41)
        let output = product(width, width, rows: t, bytesPerWeight: q41)
        let gateUp = product(2 * hidden, width, rows: t, bytesPerWeight: q41)
        let down = product(width, hidden, rows: t, bytesPerWeight: q41)
        let head = product(vocabulary, width, rows: 1, bytesPerWeight: q80)
        let seen = t * p + t * (t + 1) / 2  // causal: the row at position i sees i + 1 keys
        let rotated = t * (heads + kv / d)
        return [
            "embedding": Expected(calls: 1, flops: t * width, bytes: t * width * (q80 + 4)),
            "rmsnorm": Expected(
                calls: 61, flops: 4 * width * (2 * layers * t + 1),
                bytes: 2 * layers * (8 * t * width + 4 * width) + 8 * width + 4 * width),
            "q·k·v": Expected(calls: 30, flops: layers * qkv.0, bytes: layers * qkv.1),
            "rope": Expected(calls: 30, flops: layers * 6 * rotated * d / 2, bytes: layers * 8 * rotated * d),
            "kv append": Expected(calls: 30, flops: 0, bytes: layers * 16 * t * kv),
            "attention": Expected(
                calls: 30, flops: layers * heads * seen * (4 * d + 5),
                bytes: layers * (8 * t * width + 8 * (p + t) * kv)),
            "attn output": Expected(calls: 30, flops: layers * output.0, bytes: layers * output.1),
            "residual add": Expected(calls: 60, flops: 2 * layers * t * width, bytes: 2 * layers * 12 * t * width),
            "gate·up": Expected(calls: 30, flops: layers * gateUp.0, bytes: layers * gateUp.1),
            "swiglu": Expected(calls: 30, flops: layers * 24 * t * hidden, bytes: layers * 12 * t * hidden),
            "down": Expected(calls: 30, flops: layers * down.0, bytes: layers * down.1),
            "head": Expected(calls: 1, flops: head.0, bytes: head.1),
        ]
    }

    static func check(_ profile: OperationProfile, against expected: [String: Expected]) {
        let entries = Dictionary(uniqueKeysWithValues: profile.entriesByTime.map { ($0.name, $0) })
        #expect(Set(entries.keys) == Set(expected.keys))
        #expect(Set(entries.keys) == Set(LlamaModel.Operation.allCases.map(\.rawValue)))
        for (name, want) in expected {
            guard let entry = entries[name] else { continue }  // the key sets are compared above
            #expect(entry.calls == want.calls, "\(name) calls")
            #expect(abs(entry.flops - want.flops) <= 1e-9 * max(1, want.flops), "\(name) FLOPs \(entry.flops)")
            #expect(abs(entry.bytes - want.bytes) <= 1e-9 * want.bytes, "\(name) bytes \(entry.bytes)")
        }
    }

    @Test func aPrefillsOperationsCostWhatTheShapesSay() throws {
        let model = try SmolLM2.quantizedModel()
        let ids: [Int32] = (0..<24).map { Int32(100 + 37 * $0) }
        var plain = try model.makeCache(context: 64)
        let unprofiled = try model.forward(ids, cache: &plain)
        let profile = OperationProfile()
        var cache = try model.makeCache(context: 64)
        let logits = try model.forward(ids, cache: &cache, profile: profile)
        #expect(logits.storage == unprofiled.storage, "profiling changes no logit")
        Self.check(profile, against: Self.handCount(tokens: 24, past: 0))
    }

    @Test func aDecodeStepsOperationsCostWhatTheShapesSay() throws {
        let model = try SmolLM2.quantizedModel()
        let ids: [Int32] = (0..<40).map { Int32(100 + 37 * $0) }
        var cache = try model.makeCache(context: 64)
        _ = try model.forward(ids, cache: &cache)
        let profile = OperationProfile()
        _ = try model.forward([7], cache: &cache, profile: profile)
        Self.check(profile, against: Self.handCount(tokens: 1, past: 40))
        // A decode step reads every weight once (the file's tensors, the tied embedding once),
        // plus the cache of 41 positions (1.9 MB) and the activations (3.1 MB).
        let bytes = profile.entriesByTime.reduce(0) { $0 + $1.bytes }
        let weights = Double(model.tensorBytes)
        #expect(bytes > weights && bytes < weights + 5.5e6, "\(bytes / 1e6) MB against \(weights / 1e6) MB of weights")
    }
}
