import Foundation
import LoupeKit
import Testing

/// Every roofline figure in the unit that keeps it readable, checked against values worked out
/// by hand from the sample A100 export (sample-data/ncu/a100-sgemm-splitk-details.csv) and the
/// demo workspace's CPU kernels.
@Suite struct RooflineFormatTests {
    /// A microsecond kernel reads in µs and MFLOP/s, not "0.00 ms" and "0.0 GFLOP/s": the A100
    /// splitKreduce launch ran 4,224 ns (gpu__time_duration.sum) for 12 fadd + 4 fmul = 16 FLOPs,
    /// 3.79 MFLOP/s; the sgemm launch 7,488 ns for 6,144 + 2 × 65,536 + 8,192 = 145,408 FLOPs.
    @Test func microsecondKernelsReadInMicrosecondsAndMegaflops() {
        #expect(RooflineFormat.duration(4_224e-9) == "4.22 µs")
        #expect(RooflineFormat.rate(16 / 4_224e-9 / 1e9, unit: "FLOP/s") == "3.79 MFLOP/s")
        #expect(RooflineFormat.duration(7_488e-9) == "7.49 µs")
        #expect(RooflineFormat.rate(145_408 / 7_488e-9 / 1e9, unit: "FLOP/s") == "19.4 GFLOP/s")
        // Its intensities: 16 FLOPs over 256 DRAM bytes and over 142,208 L2 bytes.
        #expect(RooflineFormat.intensity(16.0 / 256) == "0.0625")
        #expect(RooflineFormat.intensity(16.0 / 142_208) == "0.000113")
        #expect(RooflineFormat.intensity(145_408.0 / 384) == "379")
    }

    @Test(arguments: [
        (850e-9, "850 ns"), (0.1133, "113 ms"), (2.807052, "2.81 s"), (0.0119, "11.9 ms"), (0.00999_96, "10.0 ms"),
        (0.000_999_96, "1.00 ms"), (3_600, "3600 s"), (0, "0 s"),
    ])
    func durationsTakeTheUnitThatKeepsThreeDigits(seconds: Double, shown: String) {
        #expect(RooflineFormat.duration(seconds) == shown)
    }

    /// Roofs and kernels alike: the demo CPU's FP32 and INT8 roofs and L2 bandwidth, A100's and
    /// H100's datasheet roofs (`%g` would print 1,979 TFLOP/s as `1.98e+03`).
    @Test(arguments: [
        (260.1, "FLOP/s", "260 GFLOP/s"), (5_832.1, "OP/s", "5.83 TOP/s"), (25.8, "B/s", "25.8 GB/s"),
        (1_555, "B/s", "1.55 TB/s"), (19_500, "FLOP/s", "19.5 TFLOP/s"), (989_400, "FLOP/s", "989 TFLOP/s"),
        (1_979_000, "FLOP/s", "1.98 PFLOP/s"), (0.8, "FLOP/s", "800 MFLOP/s"), (999.97, "FLOP/s", "1.00 TFLOP/s"),
        (2e-8, "FLOP/s", "20.0 FLOP/s"), (0, "FLOP/s", "0 FLOP/s"),
    ])
    func ratesTakeTheUnitThatKeepsThreeDigits(giga: Double, unit: String, shown: String) {
        #expect(RooflineFormat.rate(giga, unit: unit) == shown)
    }

    /// A fraction of the roof keeps its digits when small (the A100 sgemm at 19.4 of 19,500
    /// GFLOP/s is 0.10%, not 0%) and shows its real figure, marked, above the roof.
    @Test(arguments: [
        (0.58, "58%"), (0.042, "4.2%"), (19.42 / 19_500, "0.10%"), (3.9e-5, "<0.01%"), (0, "0%"), (1.004, "100%"),
        (1.02, "102% ⚠"), (1.47, "147% ⚠"),
    ])
    func percentagesKeepTheirDigitsAndMarkWhatIsAboveTheRoof(fraction: Double, shown: String) {
        #expect(RooflineFormat.percent(fraction) == shown)
        #expect(RooflineFormat.isAboveRoof(fraction) == shown.hasSuffix("⚠"))
    }
}
