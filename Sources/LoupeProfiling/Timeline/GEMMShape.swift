import LoupeBase

/// A matrix multiply's shape, from the input shapes a profiler recorded for its operator
/// (`record_shapes=True` writes `args["Input Dims"]`): its FLOPs are 2·batch·M·N·K. Only the
/// operators a multiply ends in are read (`aten::mm`, `addmm`, `bmm`, `baddbmm`): `aten::linear`
/// and `aten::matmul` call them, and counting both would count the work twice.
package struct GEMMShape: Hashable, Sendable, Codable {
    package var batch: Int
    package var m: Int
    package var n: Int
    package var k: Int
    /// `FP32`, `FP16`, `BF16`, `FP64`, from the first matrix's `Input type`; nil when unsaid.
    package var precision: String?

    package init(batch: Int, m: Int, n: Int, k: Int, precision: String?) {
        self.batch = batch
        self.m = m
        self.n = n
        self.k = k
        self.precision = precision
    }

    /// The operators read, and where their two matrices are among the inputs.
    package static let operators: [String: (first: Int, second: Int, batched: Bool)] = [
        "aten::mm": (0, 1, false), "aten::addmm": (1, 2, false), "aten::bmm": (0, 1, true),
        "aten::baddbmm": (1, 2, true),
    ]

    package var flops: Double { 2 * Double(batch) * Double(m) * Double(n) * Double(k) }

    /// `32×64 · 64×128`, with `8 × ` before a batch.
    package var label: String { (batch > 1 ? "\(batch) × " : "") + "\(m)×\(k) · \(k)×\(n)" }

    /// The shape of operator `name` from its `args`; nil for another operator, or shapes that
    /// are not two matrices that multiply.
    package init?(operator name: String, args: JSONValue) {
        guard let (first, second, batched) = Self.operators[name],
            case .array(let inputs) = args["Input Dims"] ?? .null, inputs.count > max(first, second)
        else { return nil }
        func dims(_ index: Int) -> [Int]? {
            guard case .array(let values) = inputs[index] else { return nil }
            let sizes = values.compactMap(\.int).map(Int.init)
            return sizes.count == values.count && sizes.allSatisfy({ $0 > 0 }) ? sizes : nil
        }
        guard let a = dims(first), let b = dims(second), a.count == (batched ? 3 : 2), b.count == a.count,
            a.last == b[b.count - 2], !batched || a[0] == b[0]
        else { return nil }
        var precision: String?
        if case .array(let types) = args["Input type"] ?? .null, types.count > first {
            precision = Self.precision(types[first].string ?? "")
        }
        self.init(
            batch: batched ? a[0] : 1, m: a[a.count - 2], n: b[b.count - 1], k: a[a.count - 1], precision: precision)
    }

    /// The roof precision of a tensor type as PyTorch writes it.
    static func precision(_ type: String) -> String? {
        switch type {
        case "float": "FP32"
        case "double": "FP64"
        case "c10::Half": "FP16"
        case "c10::BFloat16": "BF16"
        default: nil
        }
    }
}
