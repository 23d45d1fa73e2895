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

@Suite struct KernelCostFormulaTests {
    @Test func matmulCountsTwoFlopsPerMultiplyAdd() {
        let cost = KernelCost.matmul(m: 2, n: 3, k: 4)
        #expect(cost.flops == 48)
        #expect(cost.bytes == 4 * (8 + 12 + 6))
        let int8Bytes: Double = 4 * 8 + 12 + 4 * 3 + 4 * 6
        #expect(KernelCost.matmulInt8(m: 2, n: 3, k: 4).bytes == int8Bytes)
    }

    @Test func softmaxPassesSetTheTraffic() {
        #expect(KernelCost.softmax(rows: 2, columns: 5, online: false).bytes == 20 * 10)
        #expect(KernelCost.softmax(rows: 2, columns: 5, online: true).bytes == 12 * 10)
        #expect(
            KernelCost.softmax(rows: 1, columns: 1, online: true).flops
                == KernelCost.softmax(rows: 1, columns: 1, online: false).flops + KernelCost.expFlops)
    }

    @Test func flashAttentionMovesLessThanMaterialising() {
        let flash = KernelCost.attention(length: 2048, headSize: 64, materialisedPasses: nil)
        let naive = KernelCost.attention(length: 2048, headSize: 64, materialisedPasses: 7)
        #expect(flash.flops == naive.flops)
        let t = 2048.0
        let d = 64.0
        let products: Double = 4 * t * t * d
        let softmax: Double = (5 + KernelCost.expFlops) * t * t
        #expect(flash.flops == products + softmax)
        // Q and O once, K and V once per 48-row block (43 blocks).
        let streamed: Double = 2 * t * d + 2 * t * d * 43
        #expect(flash.bytes == 4 * streamed)
        let scores: Double = 4 * t * t * 7
        #expect(naive.bytes == 16 * t * d + scores)
    }
}
