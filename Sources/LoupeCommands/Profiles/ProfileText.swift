import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling

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
            window(report.window),
        ]
        for rank in report.ranks {
            lines.append("")
            if rank.cpuOnly {
                lines.append("rank \(rank.rank) · no GPU events (a CPU-only trace): its operators, by inclusive time")
                lines += kernels(rank.operators)
                continue
            }
            lines.append(
                "rank \(rank.rank) · GPU span \(ms(rank.spanNs)) · summed kernel time \(ms(rank.kernelNs)) "
                    + "(overlapping kernels each count; the families' and kernels' % are of it)")
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

    /// The window every figure is of, and how to get the other one.
    static func window(_ window: AnalysisWindow) -> String {
        window.description
            + (window.steps < 2 ? "" : window.allSteps ? "" : " (--all-steps keeps the last)")
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

    static func gemms(_ g: ProfileGEMMs, roof: (name: String, gflops: Double)?, top: Int) -> [String] {
        var lines = [
            "profile \(g.id) · \(UntrustedText.sanitized(g.name)) · matrix multiplies by shape, timed on the "
                + (g.device == "GPU"
                    ? "GPU (\(UntrustedText.sanitized(g.deviceName ?? "unnamed device")); the kernels each launched)"
                    : "host (a CPU trace: the operator itself)"),
            roof.map { String(format: "roof: %@, %.1f GFLOP/s", $0.name, $0.gflops) }
                ?? (g.device == "CPU"
                    ? "roof: none measured in this workspace (loupe roofline measure)"
                    : "roof: no datasheet for this GPU"),
        ]
        guard !g.rows.isEmpty else {
            lines.append(
                g.unshaped > 0
                    ? "no shapes: \(g.unshaped) multiplies without recorded input shapes (profile with record_shapes=True)"
                    : "no matrix multiplies (aten::mm, addmm, bmm, baddbmm)")
            return lines
        }
        lines.append(
            "  rank  count  shape                         prec    MFLOP   mean µs   GFLOP/s\(roof == nil ? "" : "  of roof")  operator"
        )
        for row in g.rows.prefix(top) {
            var line = String(
                format: "  %4d %6d  %@ %@ %8.3f %9.1f %9.2f", row.rank, row.count,
                row.shape.label.padding(toLength: 29, withPad: " ", startingAt: 0),
                (row.shape.precision ?? "?").padding(toLength: 5, withPad: " ", startingAt: 0), row.flopsEach / 1e6,
                Double(row.totalNs) / Double(row.count) / 1e3, row.gflopsPerSecond)
            if let roof { line += String(format: " %7.2f%%", 100 * row.gflopsPerSecond / roof.gflops) }
            lines.append(line + "  " + row.operatorName)
        }
        if g.unshaped > 0 { lines.append("\(g.unshaped) more without recorded shapes") }
        return lines
    }

    static func comparison(_ c: ProfileComparison, top: Int) -> [String] {
        let change = c.beforeGPUNs > 0 ? 100 * Double(c.afterGPUNs - c.beforeGPUNs) / Double(c.beforeGPUNs) : 0
        var lines = [
            "before: \(UntrustedText.sanitized(c.before)) · summed kernel time \(ms(c.beforeGPUNs)) · "
                + window(c.beforeWindow),
            "after:  \(UntrustedText.sanitized(c.after)) · summed kernel time \(ms(c.afterGPUNs)) "
                + "(\(String(format: "%+.1f%%", change))) · " + window(c.afterWindow),
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
