import Foundation

/// How trace numbers read, the same in the panel and on the shell.
package enum TraceText {
    /// "840 µs", "12.3 ms", "4.52 s", "3m 07s"; "—" for none.
    package static func duration(_ ns: Int64?) -> String {
        guard let ns else { return "—" }
        let value = Double(ns)
        switch abs(value) {
        case ..<1_000: return "\(ns) ns"
        case ..<1_000_000: return String(format: "%.0f µs", value / 1e3)
        case ..<1_000_000_000: return String(format: value < 1e7 ? "%.1f ms" : "%.0f ms", value / 1e6)
        case ..<60_000_000_000: return String(format: "%.2f s", value / 1e9)
        case ..<3_600_000_000_000:
            let seconds = Int(abs(value) / 1e9)
            return (value < 0 ? "−" : "") + "\(seconds / 60)m \(String(format: "%02d", seconds % 60))s"
        default:
            // Past an hour, hours and minutes ("11h 21m", not "681m 34s"); past a day, days and hours.
            let minutes = Int(abs(value) / 6e10)
            let sign = value < 0 ? "−" : ""
            if minutes >= 24 * 60 { return sign + "\(minutes / 1440)d \(String(format: "%02d", minutes / 60 % 24))h" }
            return sign + "\(minutes / 60)h \(String(format: "%02d", minutes % 60))m"
        }
    }

    /// "$0.0123", "$1.52"; "no price" when unknown — never $0 for a missing price.
    package static func cost(_ dollars: Double?) -> String {
        guard let dollars else { return "no price" }
        if dollars == 0 { return "$0" }
        return String(format: dollars < 0.01 ? "$%.6f" : dollars < 1 ? "$%.4f" : "$%.2f", dollars)
    }
}
