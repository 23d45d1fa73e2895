import LoupeBase
import Testing

@Suite struct CheckedNumberTests {
    @Test func secondsBecomeNanoseconds() throws {
        #expect(try CheckedNumber.nanoseconds(seconds: 1.5, field: "t") == 1_500_000_000)
        #expect(try CheckedNumber.nanoseconds(seconds: -2, field: "t") == -2_000_000_000)
    }

    @Test(arguments: [1e300, -1e300, .nan, .infinity, 9.3e9])
    func secondsOutsideInt64NanosecondsAreAFailure(_ seconds: Double) {
        let failure = #expect(throws: CheckedNumber.Failure.self) {
            try CheckedNumber.nanoseconds(seconds: seconds, field: "total_time")
        }
        #expect(failure?.field == "total_time")
        #expect(failure?.value == "\(seconds)")
    }

    @Test func shapeProductsOverflowAsAFailure() throws {
        #expect(try CheckedNumber.product(of: [2, 3, 4], field: "shape") == 24)
        #expect(try CheckedNumber.product(of: [], field: "shape") == 1)
        let overflow = #expect(throws: CheckedNumber.Failure.self) {
            try CheckedNumber.product(of: [2_147_483_648, 2_147_483_648, 4], field: "shape")
        }
        #expect(
            overflow?.description == "shape: [2147483648, 2147483648, 4] has a product that overflows a 64-bit size")
        let negative = #expect(throws: CheckedNumber.Failure.self) {
            try CheckedNumber.product(of: [-1, 4], field: "shape")
        }
        #expect(negative?.message == "shape: [-1, 4] has a negative entry")
    }

    @Test func sumsAndProductsReportOverflow() throws {
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.sum(Int.max, 1, field: "offset") }
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.sum(Int64.min, -1, field: "t") }
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.product(Int64.max / 2, 3, field: "t") }
        #expect(try CheckedNumber.sum(40, 2, field: "offset") == 42)
    }

    @Test func integersMustBeWholeAndInRange() throws {
        #expect(try CheckedNumber.integer(3, field: "epochs", in: 1...10) == 3)
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.integer(2.5, field: "epochs") }
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.integer(1e300, field: "epochs") }
        let failure = #expect(throws: CheckedNumber.Failure.self) {
            try CheckedNumber.integer(0, field: "epochs", in: 1...Int.max)
        }
        #expect(failure?.message == "epochs: 0.0 is not a whole number in 1 or more")
        #expect(throws: CheckedNumber.Failure.self) { try CheckedNumber.checked(-1, field: "k", in: 0...9) }
    }

    @Test func aFailureWithALocationSaysWhere() {
        let failure = CheckedNumber.Failure(
            location: SourceLocation(file: "a.csv", line: 3), field: "count", value: "-1", problem: "is negative")
        #expect(failure.description == "a.csv:3: count: -1 is negative")
    }
}
