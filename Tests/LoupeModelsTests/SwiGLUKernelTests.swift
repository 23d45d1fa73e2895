import CKernels
import Foundation
import LoupeModels
import Testing

/// SwiGLU's elementwise kernel (`loupe_swiglu`, `Sources/CKernels/swiglu.c`): every form against
/// the portable loop bit for bit, and the portable loop against the scalar Swift loop over
/// `Foundation.exp` (glibc's expf) it replaced in the engine, bit for bit, specials included.
@Suite(.serialized)
struct SwiGLUKernelTests {
    /// Gates spanning SwiGLU's ordinary range, glibc's special ranges (|x| ≥ 88, ±∞, NaN,
    /// subnormals) and arbitrary bit patterns; ups in [−2, 2). Deterministic (SplitMix64).
    static func inputs(count: Int) -> (gate: [Float], up: [Float]) {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func unit() -> Float { Float(next() >> 40) / Float(1 << 24) }
        let specials: [Float] = [
            0, -0, .infinity, -.infinity, .nan, 88, -88, 88.8, -88.8, 103.5, -103.5, 104, -104, 87.9, -87.9,
            .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        ]
        var gate: [Float] = []
        var up: [Float] = []
        for i in 0..<count {
            switch i % 4 {
            case 0: gate.append((unit() - 0.5) * 16)
            case 1: gate.append((unit() - 0.5) * 240)
            case 2: gate.append(Float(bitPattern: UInt32(truncatingIfNeeded: next())))
            default: gate.append(specials[(i / 4) % specials.count])
            }
            up.append((unit() - 0.5) * 4)
        }
        return (gate, up)
    }

    static func run(_ gate: [Float], _ up: [Float], form: loupe_isa) -> [UInt32] {
        var out = [Float](repeating: 0, count: gate.count)
        loupe_swiglu(gate.count, gate, up, &out, form)
        return out.map(\.bitPattern)
    }

    /// NaN payloads aside, the same bits.
    static func same(_ a: UInt32, _ b: UInt32) -> Bool {
        a == b || (Float(bitPattern: a).isNaN && Float(bitPattern: b).isNaN)
    }

    @Test func everyFormGivesThePortableBits() {
        // 100,003: full vectors of 16 and of 8, then a tail.
        let (gate, up) = Self.inputs(count: 100_003)
        let portable = Self.run(gate, up, form: LOUPE_ISA_PORTABLE)
        for form in [LOUPE_ISA_AVX2, LOUPE_ISA_AVX512] {
            let simd = Self.run(gate, up, form: form)
            let differing = zip(portable, simd).filter { !Self.same($0, $1) }.count
            #expect(differing == 0, "form \(form.rawValue): \(differing) of \(gate.count) differ")
        }
    }

    /// Whether glibc's expf runs its FMA variant here (AVX2 and FMA: the kernel's twin of it).
    static let libmUsesFMA = DecodeAttention.usableForm(headSize: 64, widest: LOUPE_ISA_AVX2) != LOUPE_ISA_PORTABLE

    #if canImport(Glibc)
        /// The engine's loop before the kernel: what every logit of the q8 and f32 paths was
        /// computed with (glibc's expf, its FMA variant on this CPU).
        @Test(.enabled(if: libmUsesFMA, "glibc's expf without FMA rounds some values otherwise"))
        func thePortableLoopGivesTheBitsOfTheSwiftLoopOverLibm() {
            let (gate, up) = Self.inputs(count: 100_003)
            let kernel = Self.run(gate, up, form: LOUPE_ISA_AVX512)
            let reference = zip(gate, up).map { g, u in (g / (1 + Foundation.exp(-g)) * u).bitPattern }
            let differing = zip(kernel, reference).filter { !Self.same($0, $1) }.count
            #expect(differing == 0, "\(differing) of \(gate.count) differ from the libm loop")
        }

        /// The kernel's e^x against libm's over every 257th float (16.7 million, every range
        /// and special).
        @Test(.enabled(if: libmUsesFMA, "glibc's expf without FMA rounds some values otherwise"))
        func itsExpIsLibmsExpf() {
            var differing = 0
            var first: Float?
            for bits in stride(from: UInt32(0), to: UInt32.max - 256, by: 257) {
                let x = Float(bitPattern: bits)
                let twin = loupe_expf_twin(x).bitPattern
                let libm = Foundation.exp(x).bitPattern
                if !Self.same(twin, libm) {
                    differing += 1
                    first = first ?? x
                }
            }
            #expect(differing == 0, "\(differing) differ, the first at \(String(describing: first))")
        }
    #endif
}
