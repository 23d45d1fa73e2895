import LoupeTensor
import Testing

@Suite struct MemoryTests {
    /// Growing through `reserveInHugePages`, across the 4 MiB past which new storage is advised for
    /// huge pages, keeps every element, in order, and room for what is added next.
    @Test func reservingInHugePagesKeepsEveryElement() {
        var grown: [Int32] = []
        var plain: [Int32] = []
        for row in 0..<3000 {
            let adding = 1 + row % 977
            Memory.reserveInHugePages(&grown, adding: adding)
            #expect(grown.capacity >= grown.count + adding)
            for i in 0..<adding {
                grown.append(Int32(truncatingIfNeeded: row &* 31 &+ i))
                plain.append(Int32(truncatingIfNeeded: row &* 31 &+ i))
            }
        }
        #expect(grown.count * 4 > 4 << 20)
        #expect(grown == plain)
        // Room already there: nothing moves.
        let capacity = grown.capacity
        Memory.reserveInHugePages(&grown, adding: capacity - grown.count)
        #expect(grown.capacity == capacity && grown == plain)
    }
}
