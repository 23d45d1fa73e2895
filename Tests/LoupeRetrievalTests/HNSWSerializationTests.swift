import Foundation
import LoupeRetrieval
import Testing

/// An index BLOB read back from a workspace is input too: a damaged one must be refused (the
/// caller rebuilds), never trusted into a trap.
@Suite struct HNSWSerializationTests {
    private static func blob() -> Data {
        var index = HNSWIndex(dimensions: 4, parameters: .init(m: 4, efConstruction: 16, efSearch: 8))
        for vector in HNSWTests.clustered(40, dimensions: 4, clusters: 3, seed: 5) { index.add(vector) }
        return index.serialized()
    }

    private static func patched(_ offset: Int, _ value: UInt32) -> Data {
        var data = blob()
        withUnsafeBytes(of: value.littleEndian) { data.replaceSubrange(offset..<(offset + 4), with: $0) }
        return data
    }

    @Test func anUntouchedBlobReadsBack() {
        #expect(HNSWIndex(serialized: Self.blob(), dimensions: 4) != nil)
    }

    /// `Int32(count)` trapped for a count past Int32.max; a huge count reserved memory for it.
    @Test(arguments: [UInt32.max, UInt32(Int32.max), 1 << 30])
    func aNodeCountTheBlobCannotHoldIsRefused(_ count: UInt32) {
        #expect(HNSWIndex(serialized: Self.patched(28, count), dimensions: 4) == nil)
    }

    /// m = 1 made every later `add` divide by log(1) = 0 and trap in `Int(_:)`.
    @Test(arguments: [UInt32(0), 1])
    func anMBelowTwoIsRefused(_ m: UInt32) {
        #expect(HNSWIndex(serialized: Self.patched(8, m), dimensions: 4) == nil)
    }

    @Test func everyTruncationIsRefused() {
        let data = Self.blob()
        for length in stride(from: 0, to: data.count, by: 7) {
            #expect(HNSWIndex(serialized: data.prefix(length), dimensions: 4) == nil)
        }
    }
}
