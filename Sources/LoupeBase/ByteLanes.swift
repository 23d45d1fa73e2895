/// Eight bytes tested at once in a `UInt64` (a word read from memory, little-endian): each test
/// sets the high bit of the lanes that match. A lane can read wrong only above a lane that
/// matched (a borrow runs upward), so whether any lane matched, and which matched first in
/// memory (the lowest set bit), are exact; ``exactlyEqual(to:in:)`` is exact in every lane.
enum ByteLanes {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Lanes equal to `byte`.
    @inline(__always)
    static func equal(to byte: UInt8, in word: UInt64) -> UInt64 {
        let x = word ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & highs
    }

    /// Lanes below `bound` (at most 0x80).
    @inline(__always)
    static func below(_ bound: UInt8, in word: UInt64) -> UInt64 {
        (word &- ones &* UInt64(bound)) & ~word & highs
    }

    /// Lanes of 0x80 and above (not ASCII).
    @inline(__always)
    static func high(in word: UInt64) -> UInt64 { word & highs }

    /// Lanes equal to `byte`, each exact (no borrow crosses lanes): for counting them.
    @inline(__always)
    static func exactlyEqual(to byte: UInt8, in word: UInt64) -> UInt64 {
        let x = word ^ (ones &* UInt64(byte))
        return ~(((x & (ones &* 0x7F)) &+ (ones &* 0x7F)) | x) & highs
    }
}
