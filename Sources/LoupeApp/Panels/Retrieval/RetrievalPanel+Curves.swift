import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension RetrievalPanel {
    /// Each engine's mark and colour on the curves chart: Loupe's bold, the peers each their own,
    /// told apart by their marks in monochrome too.
    private static func series(_ engine: String, theme: Theme) -> (mark: String, style: Style) {
        func colour(_ role: ThemeRole, _ attributes: TextAttributes = []) -> Style {
            theme.isMonochrome
                ? Style(attributes: attributes) : Style(foreground: theme.color(role), attributes: attributes)
        }
        switch engine {
        case "loupe": return ("●", colour(.rooflinePoint, .bold))
        // Loupe's beam on the float vectors: its colour, hollow.
        case "loupe f32": return ("○", colour(.rooflinePoint))
        case "hnswlib": return ("■", colour(.rooflineCompute))
        case "faiss": return ("▲", colour(.rooflineMemory))
        case "usearch": return ("◆", colour(.statusInfo))
        default: return ("○", theme.dim)
        }
    }

    /// The HNSW recall/QPS curves of one workload, ann-benchmarks' way: recall@10 across,
    /// queries per second up on a log scale, a line per engine through its efSearch sweep, and
    /// recall 0.95 marked, where the legend reads each engine's rate.
    func renderCurves(into frame: inout Frame, area: Rect, theme: Theme) {
        guard let all = curves else {
            frame.draw("Reading the sweeps…", at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
            return
        }
        guard curvesWorkload < all.count else {
            let hint: [[Span]] = [
                [Span("No sweeps kept yet. Measure one with", theme.dim)],
                [Span("  loupe bench hnsw --vectors V.f32 --queries Q.f32 --record", theme.accent)],
                [
                    Span(
                        "or scripts/bench/hnsw.sh with WORKSPACE=… for hnswlib's, faiss's and usearch's beside it.",
                        theme.dim)
                ],
            ]
            for (index, line) in hint.enumerated() {
                frame.draw(line, at: Point(x: area.x + 1, y: area.y + 1 + index), clip: area)
            }
            return
        }
        let shown = all[curvesWorkload]
        var y = area.y
        frame.draw(
            [
                Span(" workload \(curvesWorkload + 1)/\(all.count) ", theme.dim),
                Span(UntrustedText.sanitized(shown.workload), theme.title),
                Span(all.count > 1 ? "  ↑/↓ another" : "", theme.dim),
            ], at: Point(x: area.x, y: y), clip: area)
        y += 1
        for curve in shown.curves where y < area.maxY {
            let (mark, style) = Self.series(curve.engine, theme: theme)
            let rate = curve.queriesPerSecond(atRecall: ANNCurves.recall).map {
                "\(Self.grouped($0)) q/s at recall@10 0.95"
            }
            frame.draw(
                [
                    Span(" \(mark) ", style),
                    Span(
                        TextWidth.fit(UntrustedText.sanitized(curve.engine), toColumns: 10).padding(
                            toLength: 11, withPad: " ", startingAt: 0), style),
                    Span(rate ?? "never reaches recall@10 0.95", rate == nil ? theme.dim : theme.text),
                    Span(curve.buildSeconds.map { String(format: " · build %.0f s", $0) } ?? "", theme.dim),
                    Span(curve.version.map { " · " + UntrustedText.sanitized($0) } ?? "", theme.dim),
                ], at: Point(x: area.x, y: y), clip: area)
            y += 1
        }
        if let (peer, ratio) = shown.ratio, y < area.maxY {
            frame.draw(
                [
                    Span(" loupe ÷ \(UntrustedText.sanitized(peer)) (the fastest peer there): ", theme.dim),
                    Span(String(format: "%.2f×", ratio), ratio >= 1 ? theme.status(.ok) : theme.status(.warn)),
                ], at: Point(x: area.x, y: y), clip: area)
            y += 1
        }
        let chart = Rect(x: area.x, y: y + 1, width: area.width, height: area.maxY - y - 1)
        renderCurvesChart(shown, into: &frame, area: chart, theme: theme)
    }

    private func renderCurvesChart(_ shown: ANNCurves, into frame: inout Frame, area: Rect, theme: Theme) {
        let plot = Rect(x: area.x + 8, y: area.y, width: area.width - 10, height: area.height - 2)
        guard plot.width > 12, plot.height > 3 else { return }
        let points = shown.curves.flatMap(\.points).filter { $0.queriesPerSecond > 0 }
        guard !points.isEmpty else { return }
        // Recall from a twentieth below the lowest point to 1; rates over whole decades.
        let xLow = min(0.9, (points.map(\.recallAt10).min()! * 20).rounded(.down) / 20)
        let rates = points.map { log10($0.queriesPerSecond) }
        let yLow = rates.min()!.rounded(.down)
        let yHigh = max(yLow + 1, rates.max()!.rounded(.up))
        var canvas = BrailleCanvas(columns: plot.width, rows: plot.height)
        func dot(_ recall: Double, _ rate: Double) -> LoupeTUI.Point {
            let x = (recall - xLow) / (1 - xLow) * Double(canvas.dotWidth - 1)
            let y = Double(canvas.dotHeight - 1) - (log10(rate) - yLow) / (yHigh - yLow) * Double(canvas.dotHeight - 1)
            return LoupeTUI.Point(x: Int(x.rounded()), y: Int(y.rounded()))
        }
        // Recall 0.95, dotted.
        let bar = dot(ANNCurves.recall, pow(10, yLow)).x
        for y in stride(from: 0, to: canvas.dotHeight, by: 3) { canvas.set(x: bar, y: y, style: theme.dim) }
        // Loupe's line last, so it lies on top where the lines cross.
        for curve in shown.curves.reversed() {
            let style = Self.series(curve.engine, theme: theme).style
            let dots = curve.points.filter { $0.queriesPerSecond > 0 }.map { dot($0.recallAt10, $0.queriesPerSecond) }
            for (from, to) in zip(dots, dots.dropFirst()) { canvas.line(from: from, to: to, style: style) }
            if dots.count == 1 { canvas.set(x: dots[0].x, y: dots[0].y, style: style) }
        }
        canvas.render(into: &frame, origin: LoupeTUI.Point(x: plot.x, y: plot.y))
        for curve in shown.curves.reversed() {
            let (mark, style) = Self.series(curve.engine, theme: theme)
            for point in curve.points where point.queriesPerSecond > 0 {
                let at = dot(point.recallAt10, point.queriesPerSecond)
                let cell = LoupeTUI.Point(x: plot.x + at.x / 2, y: plot.y + at.y / 4)
                if plot.contains(cell) { frame.draw(mark, at: cell, style: style) }
            }
        }
        // Axes: q/s at each decade up the left, recall along the bottom.
        let axis = Style(foreground: theme.color(.chartAxis))
        for decade in Int(yLow)...Int(yHigh) {
            let row = plot.y + dot(1, pow(10, Double(decade))).y / 4
            frame.draw(
                Self.grouped(pow(10, Double(decade))).leftPadded(to: 7), at: LoupeTUI.Point(x: area.x, y: row),
                style: axis, clip: area)
        }
        let bottom = plot.maxY
        frame.draw("q/s", at: LoupeTUI.Point(x: area.x + 4, y: bottom), style: axis, clip: area)
        frame.draw(
            String(repeating: "─", count: plot.width), at: LoupeTUI.Point(x: plot.x, y: bottom), style: axis, clip: area
        )
        for recall in stride(from: xLow, through: 1.0001, by: 0.05) {
            let column = plot.x + dot(recall, pow(10, yLow)).x / 2
            let label = String(format: "%.2f", recall)
            frame.draw(
                label, at: LoupeTUI.Point(x: min(column, plot.maxX - label.count), y: bottom + 1), style: axis,
                clip: area)
        }
        frame.draw("recall@10", at: LoupeTUI.Point(x: plot.maxX - 9, y: bottom), style: axis, clip: area)
    }

    /// 12800 as `12,800`, 1e6 as `1,000,000`.
    static func grouped(_ value: Double) -> String { LoupeBase.grouped(Int(value.rounded())) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
