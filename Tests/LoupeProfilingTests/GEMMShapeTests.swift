import LoupeBase
import LoupeProfiling
import Testing

/// Matrix-multiply shapes from the `args` torch.profiler writes with record_shapes=True (as in
/// the fixtures' CPU MLP and MI250 traces).
@Suite struct GEMMShapeTests {
    private func shape(_ name: String, _ args: String) throws -> GEMMShape? {
        GEMMShape(operator: name, args: try JSONValue.parse(args))
    }

    @Test func theMultipliesAndTheirFLOPs() throws {
        let addmm = try #require(
            try shape(
                "aten::addmm",
                #"{"Input Dims": [[128], [32, 64], [64, 128], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}"#
            ))
        #expect(addmm == GEMMShape(batch: 1, m: 32, n: 128, k: 64, precision: "FP32"))
        #expect(addmm.flops == 2 * 32 * 128 * 64)
        #expect(addmm.label == "32×64 · 64×128")
        let mm = try #require(try shape("aten::mm", #"{"Input Dims": [[10, 32], [32, 128]]}"#))
        #expect(mm == GEMMShape(batch: 1, m: 10, n: 128, k: 32, precision: nil))
        let bmm = try #require(
            try shape(
                "aten::bmm",
                #"{"Input Dims": [[8, 16, 64], [8, 64, 32]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}"#))
        #expect(bmm == GEMMShape(batch: 8, m: 16, n: 32, k: 64, precision: "BF16"))
        #expect(bmm.label == "8 × 16×64 · 64×32")
        let baddbmm = try #require(
            try shape(
                "aten::baddbmm",
                #"{"Input Dims": [[4, 2, 3], [4, 2, 5], [4, 5, 3]], "Input type": ["c10::Half", "c10::Half", "c10::Half"]}"#
            ))
        #expect(baddbmm.flops == 2 * 4 * 2 * 3 * 5 && baddbmm.precision == "FP16")
    }

    /// Operators that call a multiply, shapes that do not multiply, and missing shapes give none.
    @Test func notAMultiplyGivesNone() throws {
        #expect(try shape("aten::linear", #"{"Input Dims": [[32, 64], [128, 64], [128]]}"#) == nil)
        #expect(try shape("aten::mm", #"{"Input Dims": [[32, 64], [65, 128]]}"#) == nil)
        #expect(try shape("aten::mm", #"{"Input Dims": [[32, 64]]}"#) == nil)
        #expect(try shape("aten::bmm", #"{"Input Dims": [[2, 3, 4], [3, 4, 5]]}"#) == nil)
        #expect(try shape("aten::mm", #"{"External id": 4}"#) == nil)
        #expect(try shape("aten::mm", #"{"Input Dims": [[0, 4], [4, 5]]}"#) == nil)
    }
}
