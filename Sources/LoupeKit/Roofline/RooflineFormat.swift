import Foundation

/// How every roofline figure reads, in the panel (table, roof labels, footer) and in
/// `loupe roofline show` and `compare`: a time or a rate in the unit that keeps it between 1 and
/// 1,000, with three significant digits, as Nsight Compute shows them (`7.42 µs`, `19.4 MFLOP/s`,
/// `1.98 PFLOP/s`), so a microsecond kernel never reads `0.00 ms` and `0.0 GFLOP/s`.
package enum RooflineFormat {
    /// What a precision's roof counts a second: integer operations for `INT8`, `INT4`,
    /// floating-point ones otherwise.
    package static func operations(_ precision: String) -> String { precision.hasPrefix("INT") ? "OP/s" : "FLOP/s" }

    /// `7.42 µs`, `113 ms`, `2.81 s`, `850 ns` from seconds.
    package static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "—" }
        guard seconds > 0 else { return "0 s" }
        return scaled(seconds, units: ["ns", "µs", "ms", "s"], first: 1e-9)
    }

    /// `260 GFLOP/s`, `19.4 MFLOP/s`, `5.83 TOP/s`, `1.55 TB/s`, `1.98 PFLOP/s` from a rate in
    /// giga-units a second (GFLOP/s, GB/s): `unit` is what is counted per second (`FLOP/s`, `B/s`).
    package static func rate(_ giga: Double, unit: String) -> String {
        guard giga.isFinite else { return "— " + unit }
        guard giga > 0 else { return "0 " + unit }
        return scaled(giga * 1e9, units: ["", "k", "M", "G", "T", "P", "E"].map { $0 + unit }, first: 1)
    }

    /// FLOP/byte with three significant digits: `171`, `9.86`, `1.20`, `0.0620`.
    package static func intensity(_ flopsPerByte: Double) -> String {
        guard flopsPerByte.isFinite else { return "—" }
        guard flopsPerByte > 0 else { return "0" }
        if flopsPerByte >= 1 { return digits(flopsPerByte) }
        // Below 1: three significant digits after the leading zeros (0.621, 0.0620, 0.00123).
        let decimals = min(12, 2 - Int(floor(log10(flopsPerByte))))
        return String(format: "%.\(decimals)f", flopsPerByte)
    }

    /// True when a kernel runs faster than the roof it is judged against allows, by more than
    /// rounding (it would read 101% or more): a measured peak, a bandwidth or the bytes counted
    /// are off, and the figure says so instead of passing for a kernel at its roof.
    package static func isAboveRoof(_ fraction: Double) -> Bool { fraction * 100 >= 100.5 }

    /// A fraction of the attainable roof as a percentage: `58%`, `4.2%`, `0.10%`, `<0.01%`, and
    /// above the roof the real figure marked, `102% ⚠`.
    package static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "—" }
        let percent = fraction * 100
        let text: String
        switch percent {
        case 9.95...: text = String(format: "%.0f%%", percent)
        case 0.995..<9.95: text = String(format: "%.1f%%", percent)
        case 0.005..<0.995: text = String(format: "%.2f%%", percent)
        case ..<0: text = String(format: "%.0f%%", percent)
        default: text = percent == 0 ? "0%" : "<0.01%"
        }
        return isAboveRoof(fraction) ? text + " ⚠" : text
    }

    /// What a kernel above its roof is told, after its figure: under the compute peak the peak was
    /// measured slower than this run went; under a memory roof the kernel's data came from a faster
    /// level than the one it is judged at, or its bytes were undercounted.
    package static func aboveRoofWarning(bound: String?, level: String?) -> String {
        bound == "compute"
            ? "above the peak: measured slower than this run, roofline measure again (or check the FLOPs counted)"
            : "above the \(level ?? "memory") roof: check the bytes counted, or it reuses data from a faster level"
    }

    /// `value` in the unit of `units` (each 1,000 times the one before, the first worth `first`)
    /// that puts it in [1, 1000), three significant digits; the largest unit takes any size, the
    /// smallest any smallness.
    private static func scaled(_ value: Double, units: [String], first: Double) -> String {
        var index = max(0, min(units.count - 1, Int(floor(log10(value / first) / 3))))
        var shown = value / (first * pow(1000, Double(index)))
        // 999.7 rounds to 1000: that is 1.00 of the next unit.
        if digits(shown) == "1000", index + 1 < units.count {
            index += 1
            shown /= 1000
        }
        return digits(shown) + " " + units[index]
    }

    /// Three significant digits for a value from 1 up: `1.20`, `19.4`, `260`, `2807`.
    private static func digits(_ value: Double) -> String {
        if value >= 99.95 { return String(format: "%.0f", value) }
        if value >= 9.995 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}
