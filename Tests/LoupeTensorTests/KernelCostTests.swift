import Glibc
import LoupeTensor
import Testing

@Suite struct KernelCostTests {
    @Test func linearCountsMultiplyAddsAndEveryOperand() {
        let cost = KernelCost.linear(rows: 2, inputs: 3, outputs: 4)
        let flops: Double = 2 * 2 * 3 * 4 + 2 * 4  // multiply-adds plus the bias
        let bytes: Double = 4 * (6 + 12 + 16 + 4)  // x, w, output read and written, bias
        #expect(cost.flops == flops)
        #expect(cost.bytes == bytes)
    }

    @Test func attentionScalesWithTheSquareOfEachSequence() {
        let one = KernelCost.attention(lengths: [10], heads: 12, headSize: 32)
        let ten: Double = 12 * (4 * 100 * 32 + 5 * 100)
        let twenty: Double = 12 * (4 * 400 * 32 + 5 * 400)
        #expect(one.flops == ten)
        let two = KernelCost.attention(lengths: [10, 20], heads: 12, headSize: 32)
        #expect(two.flops == ten + twenty)
    }

    @Test func elementwiseKernelsAreMemoryBound() {
        #expect(KernelCost.add(count: 100).flops / KernelCost.add(count: 100).bytes < 0.1)
        #expect(KernelCost.layerNorm(rows: 10, columns: 384).flops == 7 * 3840)
        #expect(KernelCost.gelu(count: 8).bytes == 64)
    }
}

@Suite struct OperationProfileTests {
    @Test func measureAccumulatesCallsWorkAndTime() {
        let profile = OperationProfile()
        var ran = 0
        for _ in 0..<3 { profile.measure("op", flops: 10, bytes: 5) { ran += 1 } }
        profile.measure("other", flops: 1, bytes: 1) { _ = usleep(2000) }
        let entries = profile.entriesByTime
        #expect(ran == 3)
        #expect(entries.first?.name == "other")
        let op = entries.first { $0.name == "op" }
        #expect(op?.calls == 3)
        #expect(op?.flops == 30)
        #expect(op?.flopsPerByte == 2)
        #expect((entries.first?.nanoseconds ?? 0) >= 2_000_000)
        #expect(OperationProfile.measure(nil, "none", flops: 1, bytes: 1) { 42 } == 42)
    }
}
