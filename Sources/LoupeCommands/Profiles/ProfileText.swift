import Foundation
import LoupeKit
import LoupeTUI

/// A profile's report as the shell prints it.
enum ProfileText {
    static func ms(_ ns: Int64) -> String { String(format: "%.3f ms", Double(ns) / 1e6) }
    static func us(_ ns: Double) -> String { String(format: "%.1f µs", ns / 1e3) }
    static func shares(_ shares: [ProfileReport.Share], limit: Int = 6) -> String {
        shares.prefix(limit).map { "\($0.label) \(String(format: "%.1f%%", $0.percent))" }.joined(separator: " · ")
    }

    static func report(_ report: ProfileReport) -> [String] {
        var lines = [
            "profile \(report.id) · \(UntrustedText.sanitized(report.name)) · \(report.ranks.count) rank\(report.ranks.count == 1 ? "" : "s")",
            "window: \(report.window)",
        ]
        for rank in report.ranks {
            lines.append("")
            if rank.cpuOnly {
                lines.append("rank \(rank.rank) · no GPU events (a CPU-only trace): its operators, by inclusive time")
                lines += kernels(rank.operators)
                continue
            }
            lines.append("rank \(rank.rank) · GPU span \(ms(rank.spanNs))")
            lines.append(
                "  time          "
                    + rank.temporal.map { "\($0.label) \(ms($0.nanoseconds)) \(String(format: "%.1f%%", $0.percent))" }
                    .joined(separator: "   "))
            lines.append("  kernel types  " + shares(rank.kernelTypes))
            lines.append("  families      " + shares(rank.families))
            if let overlap = rank.communicationOverlap {
                lines.append(String(format: "  overlap       computation overlapped %.1f%% of communication", overlap))
            }
            let l = rank.launches
            if l.pairs > 0 {
                lines.append(
                    "  launches      \(l.pairs) launch → start: mean \(us(l.meanDelayNs)), p50 \(us(l.p50DelayNs)), "
                        + "p99 \(us(l.p99DelayNs)); the launch call itself \(us(l.meanCallNs)) on average")
            }
            for stream in rank.idle where stream.hostWaitNs + stream.kernelWaitNs + stream.otherNs > 0 {
                lines.append(
                    "  idle stream \(stream.stream)  host wait \(ms(stream.hostWaitNs)) · kernel wait "
                        + "\(ms(stream.kernelWaitNs)) · other \(ms(stream.otherNs))")
            }
            lines += kernels(rank.kernels)
        }
        return lines
    }

    static func kernels(_ kernels: [ProfileReport.Kernel]) -> [String] {
        guard !kernels.isEmpty else { return ["  none"] }
        let what = kernels[0].type == "cpu_op" ? "operator" : "kernel"
        var lines = ["   total ms      %   count    mean µs     p50 µs     p99 µs  family         \(what)"]
        for k in kernels {
            lines.append(
                String(
                    format: "%11.3f %6.1f %7d %10.1f %10.1f %10.1f  %@  ", Double(k.totalNs) / 1e6, k.percent, k.count,
                    k.meanNs / 1e3, k.p50Ns / 1e3, k.p99Ns / 1e3,
                    k.family.padding(toLength: 13, withPad: " ", startingAt: 0))
                    + TextWidth.truncate(UntrustedText.sanitized(k.name), toColumns: 90))
        }
        return lines
    }

    static func comparison(_ c: ProfileComparison, top: Int) -> [String] {
        let change = c.beforeGPUNs > 0 ? 100 * Double(c.afterGPUNs - c.beforeGPUNs) / Double(c.beforeGPUNs) : 0
        var lines = [
            "before: \(UntrustedText.sanitized(c.before)) · GPU time \(ms(c.beforeGPUNs))",
            "after:  \(UntrustedText.sanitized(c.after)) · GPU time \(ms(c.afterGPUNs)) (\(String(format: "%+.1f%%", change)))",
            "",
            "  before ms   after ms   delta ms  count b→a     kernel",
        ]
        for row in c.rows.prefix(top) {
            let mark = row.presence == "new" ? "new " : row.presence == "removed" ? "gone " : ""
            lines.append(
                String(
                    format: "%10.3f %10.3f %+10.3f  %5d→%-5d  ", Double(row.beforeNs) / 1e6, Double(row.afterNs) / 1e6,
                    Double(row.deltaNs) / 1e6, row.beforeCount, row.afterCount)
                    + mark + TextWidth.truncate(UntrustedText.sanitized(row.name), toColumns: 80))
        }
        let added = c.rows.filter { $0.presence == "new" }.count
        let removed = c.rows.filter { $0.presence == "removed" }.count
        lines.append("\(c.rows.count) kernels: \(added) new, \(removed) removed")
        return lines
    }
}
