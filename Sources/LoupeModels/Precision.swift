/// The arithmetic of an encoder's linear layers.
package enum Precision: String, Sendable, CaseIterable, Codable {
    /// 32-bit floats throughout, as the checkpoint ships.
    case fp32
    /// Weights int8 per output channel, activations int8 per token (dynamic), int32 sums.
    case int8
}
