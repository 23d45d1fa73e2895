import LoupeKit
import Testing

/// Durations and costs as every trace view writes them.
@Suite struct TraceTextTests {
    @Test func durationsUseTheUnitThatReads() {
        #expect(TraceText.duration(nil) == "—")
        #expect(TraceText.duration(512) == "512 ns")
        #expect(TraceText.duration(2_400_000) == "2.4 ms")
        #expect(TraceText.duration(4_210_000_000) == "4.21 s")
        #expect(TraceText.duration(754_000_000_000) == "12m 34s")
        // The walkthrough's Inspect log: "681m 34s" reads as 11h 21m.
        #expect(TraceText.duration(40_894_000_000_000) == "11h 21m")
        #expect(TraceText.duration(3_600_000_000_000) == "1h 00m")
        #expect(TraceText.duration(100 * 3_600_000_000_000) == "4d 04h")
        #expect(TraceText.duration(-754_000_000_000) == "−12m 34s")
    }

    @Test func aMissingPriceIsNeverZero() {
        #expect(TraceText.cost(nil) == "no price")
        #expect(TraceText.cost(0) == "$0")
        #expect(TraceText.cost(0.000056) == "$0.000056")
        #expect(TraceText.cost(1.5) == "$1.50")
    }
}
