import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension RooflinePanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let count = data?.profiles.count ?? 0
        let trailing = profile.map {
            "\($0.name) · \(precision)" + (count > 1 ? " · \(profileIndex + 1)/\(count)" : "")
        }
        // A trace step's forward pass names itself; esc goes back to every kernel.
        let title =
            focus.map { "Roofline · " + UntrustedText.sanitized($0.title) + " · esc: all kernels" } ?? "Roofline"
        let inner = Block(title: title, trailingTitle: trailing ?? "", focused: context.focused).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 8 else { return }
        guard let profile, let peak = profile.peak(precision)?.value ?? profile.computeCeilings.map(\.value).max()
        else {
            if let error {
                let lines = [
                    [Span("✗ The roofs could not be read: ", theme.status(.error)), Span(error, theme.text)],
                    [Span("Press ", theme.dim), Span("r", theme.key), Span(" to try again.", theme.dim)],
                ]
                for (row, line) in lines.enumerated() where row < inner.height {
                    frame.draw(line, at: Point(x: inner.x + 1, y: inner.y + 1 + row), clip: inner)
                }
                return
            }
            let lines = [
                [
                    Span(
                        data == nil ? "Reading the workspace…" : "No machine profile in this workspace yet.", theme.text
                    )
                ],
                [
                    Span("Measure this machine with ", theme.dim), Span("loupe roofline measure", theme.accent),
                    Span(", its kernels with ", theme.dim), Span("loupe kernels bench", theme.accent),
                    Span(" or ", theme.dim), Span("loupe embed --profile TEXT", theme.accent),
                ],
                [
                    Span("import GPU kernels with ", theme.dim),
                    Span("loupe roofline import-ncu FILE.csv", theme.accent), Span(", then press ", theme.dim),
                    Span("r", theme.key), Span(".", theme.dim),
                ],
            ]
            for (index, line) in lines.enumerated() {
                frame.draw(line, at: Point(x: inner.x + 1, y: inner.y + 1 + index), clip: inner)
            }
            if let profile {
                let how = profile.kind == "cpu" ? "measure them with loupe roofline measure" : "import with --gpu NAME"
                frame.draw(
                    "\(profile.name): \(profile.points.count) kernels, no roofs (\(how))",
                    at: Point(x: inner.x + 1, y: inner.y + 5), style: theme.dim, clip: inner)
            }
            return
        }
        let rows = self.rows
        // Wide: the chart beside the table. Otherwise the chart above a full-width table, so the
        // kernel names (what one reads first) keep their room; the rows a short table leaves
        // (its header, its kernels and two lines under it) go to the chart.
        let chartHeight = max(8, inner.height * 11 / 20, min(inner.height - rows.count - 3, inner.height * 3 / 4))
        let parts: [Rect] =
            context.zoomed
            ? [inner, Rect(x: inner.x, y: inner.maxY, width: inner.width, height: 0)]
            : inner.width >= 170
                ? inner.split(.horizontal, [.fill(1), .length(min(100, inner.width * 11 / 20))])
                : inner.split(.vertical, [.length(chartHeight), .fill(1)])
        renderChart(profile, rows: rows, peak: peak, into: &frame, area: parts[0], theme: theme)
        if !parts[1].isEmpty {
            renderTable(rows, into: &frame, area: parts[1], theme: theme, focused: context.focused)
        }
    }

    private func renderChart(
        _ profile: RooflineModel.Profile, rows: [RooflineModel.Placement], peak: Double, into frame: inout Frame,
        area: Rect, theme: Theme
    ) {
        let plot = Rect(x: area.x + 7, y: area.y, width: area.width - 8, height: area.height - 2)
        guard plot.width > 10, plot.height > 4 else { return }
        let memory = profile.memoryCeilings.sorted { $0.value > $1.value }
        let compute = profile.computeCeilings
        let plotted = rows.filter { ($0.flopsPerByte ?? 0) > 0 && ($0.gflopsPerSecond ?? 0) > 0 }
        // Axes cover every point, every ridge and every roof.
        let ridges = compute.compactMap { roof in memory.map { roof.value / $0.value }.min() }
        let intensities = plotted.compactMap(\.flopsPerByte) + memory.map { peak / $0.value } + ridges
        let rates = plotted.compactMap(\.gflopsPerSecond)
        // Each decade the same whole number of cells. The last x tick's label takes 3 more columns.
        let xAxis = DecadeAxis(
            low: Int(floor(log10(min(0.1, (intensities.min() ?? 1) / 2)))),
            high: Int(ceil(log10(max(100, (intensities.max() ?? 1) * 2)))), cells: plot.width - 3)
        let yAxis = DecadeAxis(
            low: Int(floor(log10(min(1, (rates.min() ?? 1) / 2)))),
            high: Int(ceil(log10(max(peak, compute.map(\.value).max() ?? peak, rates.max() ?? 0) * 1.5))),
            cells: plot.height)
        var canvas = BrailleCanvas(columns: xAxis.cells, rows: yAxis.cells)
        // The chart stands on the x axis; rows its decades leave over stay free above it.
        let origin = Point(x: plot.x, y: plot.maxY - yAxis.cells)
        let (xLow, xHigh, yLow) = (Double(xAxis.low), Double(xAxis.high), Double(yAxis.low))
        // In dots, from the top left; the low y decade is the top dot of the bottom row.
        let bottomDot = Double(4 * (yAxis.cells - 1))
        func point(_ x: Double, _ y: Double) -> Point {
            Point(
                x: Int(xAxis.dots(log10(x), dotsPerCell: 2).rounded()),
                y: Int((bottomDot - yAxis.dots(log10(y), dotsPerCell: 4)).rounded()))
        }
        func cell(_ dot: Point) -> Point { Point(x: origin.x + dot.x / 2, y: origin.y + dot.y / 4) }
        let computeStyle =
            theme.isMonochrome ? Style(attributes: .bold) : Style(foreground: theme.color(.rooflineCompute))
        let memoryStyle = theme.isMonochrome ? Style() : Style(foreground: theme.color(.rooflineMemory))
        let ridgeLow = memory.map { peak / $0.value }.min() ?? pow(10, xLow)
        // Other precisions' roofs, dim, from the fastest memory's diagonal to the right edge.
        let others = compute.filter { $0.value != peak }
        for roof in others {
            let start = memory.map { roof.value / $0.value }.min() ?? pow(10, xLow)
            canvas.line(from: point(start, roof.value), to: point(pow(10, xHigh), roof.value), style: theme.dim)
        }
        canvas.line(from: point(ridgeLow, peak), to: point(pow(10, xHigh), peak), style: computeStyle)
        // Each diagonal also alone, to find the cells beside it for its label.
        var diagonals: [BrailleCanvas] = []
        for roof in memory {
            let start = max(pow(10, xLow), pow(10, yLow) / roof.value)
            let (from, to) = (point(start, roof.value * start), point(peak / roof.value, peak))
            canvas.line(from: from, to: to, style: memoryStyle)
            var alone = BrailleCanvas(columns: canvas.columns, rows: canvas.rows)
            alone.line(from: from, to: to, style: memoryStyle)
            diagonals.append(alone)
        }
        // Against a baseline: a line from each kernel's baseline run to it.
        var baselinePoints: [Point] = []
        if let baselineSuite, let data {
            for placement in plotted {
                guard let base = data.baseline(for: placement.point, suite: baselineSuite),
                    let rate = base.gflopsPerSecond(precision), let intensity = base.flopsPerByte(precision)
                else { continue }
                let from = point(intensity, rate)
                canvas.line(
                    from: from, to: point(placement.flopsPerByte!, placement.gflopsPerSecond!), style: theme.dim)
                baselinePoints.append(from)
            }
        }
        canvas.render(into: &frame, origin: origin)
        // Every mark is drawn and kept free of labels before any label is placed: a label moves or
        // goes to the legend rather than hide a kernel.
        let lines = canvas
        var placer = LabelPlacer(area: plot) { x, y in lines.hasDots(column: x - origin.x, row: y - origin.y) }
        func mark(_ text: String, at: Point, style: Style) {
            guard plot.contains(at) else { return }
            frame.draw(text, at: at, style: style)
            placer.reserve(Rect(x: at.x, y: at.y, width: 1, height: 1))
        }
        for dot in baselinePoints { mark("○", at: cell(dot), style: theme.dim) }
        for roof in memory { mark("◇", at: cell(point(peak / roof.value, peak)), style: computeStyle) }
        let selectedName = list.selected < rows.count ? rows[list.selected].point : nil
        let pointStyle = theme.isMonochrome ? Style(attributes: .bold) : Style(foreground: theme.color(.rooflinePoint))
        for placement in plotted where placement.point != selectedName {
            mark("●", at: cell(point(placement.flopsPerByte!, placement.gflopsPerSecond!)), style: pointStyle)
        }
        // The hierarchical roofline: the selected kernel at every level that counted its bytes;
        // those other than the level it is judged at are marked with the level's digit or letter.
        let selectedRow = rows.first { $0.point == selectedName }
        let levels = selectedRow.map { profile.levelPlacements($0.point, precision: precision) } ?? []
        let otherLevels = levels.filter { $0.level != selectedRow?.level }
        let selected = plotted.first { $0.point == selectedName }
        if selected != nil {
            for other in otherLevels {
                mark(
                    Self.levelMark(other.level), at: cell(point(other.flopsPerByte, other.gflopsPerSecond)),
                    style: theme.accent)
            }
        }
        let selectedAt = selected.map { cell(point($0.flopsPerByte!, $0.gflopsPerSecond!)) }
        if let selectedAt { mark("◆", at: selectedAt, style: theme.selection) }
        var unplaced: [String] = []
        // Compute roofs, the fastest first. Roofs on one row share its label, fastest first; a
        // label sits on its roof's row, as far right as the kernels let it, else on the row just
        // above or below, between its neighbours' labels. With no roof of its own (Tensor FLOPs
        // from ncu's tensor pipe), the top line is the fastest roof the profile has, named as itself.
        let fastest = profile.computeCeilings.max { $0.value < $1.value }
        let ownRoof = profile.peak(precision)
        let peakName = ownRoof?.name ?? fastest?.name ?? precision
        let roofs =
            ([(peakName, peak, ownRoof == nil ? (fastest?.precision ?? precision) : precision)]
            + others.map { ($0.name, $0.value, $0.precision ?? "FP32") }).sorted { $0.1 > $1.1 }
        var groups: [(row: Int, text: String, start: Int, holdsPeak: Bool)] = []
        for (name, value, roofPrecision) in roofs {
            let text = name + " " + Self.rate(value, unit: Self.operations(roofPrecision))
            let row = cell(point(1, value)).y
            let start = cell(point(memory.map { value / $0.value }.min() ?? pow(10, xLow), value)).x
            if let last = groups.last, last.row == row {
                groups[groups.count - 1].text += " · " + text
                groups[groups.count - 1].start = min(last.start, start)
                groups[groups.count - 1].holdsPeak = last.holdsPeak || value == peak
            } else {
                groups.append((row, text, start, value == peak))
            }
        }
        var labelAbove = Int.min
        for (index, group) in groups.enumerated() {
            let text = " " + group.text
            let width = TextWidth.of(text)
            let below = index + 1 < groups.count ? groups[index + 1].row : Int.max
            // On a row: over the line's right end, moving left as kernels require while a few of
            // its cells stay in sight before the label; else just before the line's start.
            func along(_ row: Int) -> [[Point]] {
                [
                    stride(from: plot.maxX - width, through: group.start + 4, by: -1).map { Point(x: $0, y: row) },
                    (0..<4).map { Point(x: group.start - 1 - width - $0, y: row) },
                ]
            }
            let tries = ([group.row] + [group.row - 1, group.row + 1].filter { $0 < below }).filter { $0 > labelAbove }
            var spot: Point?
            for candidates in tries.flatMap(along) where spot == nil {
                spot = placer.place(width: width, candidates: candidates)
            }
            if let spot {
                frame.draw(text, at: spot, style: group.holdsPeak ? computeStyle : theme.dim, clip: plot)
                labelAbove = spot.y
            } else {
                unplaced.append(group.text)
            }
        }
        // Memory roofs, the fastest first: each label beside its own diagonal, on a row the
        // diagonal crosses below the peak's, and below the faster levels' labels (the order of the
        // lines), wherever it hides the fewest of the other lines.
        let peakRow = cell(point(1, peak)).y
        labelAbove = peakRow
        for (roof, alone) in zip(memory, diagonals) {
            let text = "\(roof.name) \(Self.rate(roof.value, unit: "B/s"))"
            let width = TextWidth.of(text)
            var candidates: [Point] = []
            for row in 0..<alone.rows where origin.y + row > labelAbove {
                let columns = (0..<alone.columns).filter { alone.hasDots(column: $0, row: row) }
                guard let first = columns.first, let last = columns.last else { continue }
                candidates += [
                    Point(x: origin.x + first - width - 1, y: origin.y + row),
                    Point(x: origin.x + last + 2, y: origin.y + row),
                ]
            }
            if let spot = placer.place(width: width, candidates: candidates) {
                frame.draw(text, at: spot, style: memoryStyle, clip: plot)
                labelAbove = spot.y
            } else {
                unplaced.append(text)
            }
        }
        for tick in yAxis.ticks {
            frame.draw(
                TextWidth.fit(Self.decade(tick.exponent), toColumns: 6, alignment: .trailing),
                at: Point(x: area.x, y: origin.y + yAxis.cells - 1 - tick.cell), style: theme.dim, clip: area)
        }
        for tick in xAxis.ticks {
            frame.draw(
                Self.decade(tick.exponent), at: Point(x: origin.x + tick.cell, y: plot.maxY), style: theme.dim,
                clip: area)
        }
        // FLOP/byte and GFLOP/s, or OP/byte and GOP/s for an integer precision.
        let operation = Self.operations(precision).dropLast(2)
        var legend = "\(operation)/byte →   ↑ \(precision == "FP32" ? "" : precision + " ")G\(operation)/s   ◇ ridge"
        if let baselineSuite, !baselinePoints.isEmpty { legend += "   ○ baseline \(baselineSuite)" }
        // The selected kernel is named here, not beside its point: a label box in the plot hides
        // the kernels and roofs around the one you are looking at. Its other levels' marks are
        // explained after its name, which gives up columns (down to 12) before they do.
        var named: [Span] = []
        if let selected {
            let levelsText =
                levels.count > 1
                ? " at " + (selectedRow?.level ?? "its level") + ", "
                    + otherLevels.map { Self.levelMark($0.level) + " " + $0.level }.joined(separator: ", ") : ""
            let room = plot.width - TextWidth.of(levelsText) - TextWidth.of(legend) - 5
            let name = TextWidth.truncate(selected.point.name, toColumns: max(12, min(32, room)))
            named = [Span("◆ " + name, theme.accent), Span(levelsText + "   ", theme.dim)]
        }
        // The roofs no place on the chart was left for come next: their figures matter more than
        // the axes' units, which the table's header also gives.
        frame.draw(
            named + (unplaced.isEmpty ? [] : [Span(unplaced.joined(separator: " · ") + "   ", theme.dim)])
                + [Span(legend, theme.dim)], at: Point(x: plot.x, y: plot.maxY + 1), clip: area)
    }

    /// True when the profile holds kernels of more than one import or run (two Nsight Compute
    /// exports of the same GPU): the shape column then names each kernel's, and is wider.
    var showsSuites: Bool { profile.map { Set($0.points.map(\.suite)).count > 1 } ?? false }

    /// The table's `shape` cell: the shape, after the import or run it came from when
    /// ``showsSuites``.
    func shapeCell(_ point: RooflineModel.Point, showsSuites: Bool) -> String {
        let shape = point.shownShape
        guard showsSuites else { return shape }
        let suite = point.suite.hasPrefix("ncu:") ? String(point.suite.dropFirst(4)) : point.suite
        return suite + " · " + shape
    }

    /// The table's `vs base` cell: `base` for the baseline's own kernels, the speedup of the
    /// baseline's time over this one (`1.32×` faster, `0.80×` slower), `—` with no match.
    func baselineCell(_ point: RooflineModel.Point) -> String {
        guard let baselineSuite else { return "" }
        if point.suite == baselineSuite { return "base" }
        guard let base = data?.baseline(for: point, suite: baselineSuite), point.seconds > 0 else { return "—" }
        return String(format: "%.2f×", base.seconds / point.seconds)
    }

    /// A memory level's mark on the chart: `1` for L1, `2` for L2, `D` for DRAM, else its initial.
    static func levelMark(_ level: String) -> String {
        level.hasPrefix("L") && level.count == 2 ? String(level.last!) : String(level.prefix(1))
    }

    /// What a precision's roof counts: integer operations for `INT8`, `INT4`, floating-point
    /// ones otherwise.
    package static func operations(_ precision: String) -> String { precision.hasPrefix("INT") ? "OP/s" : "FLOP/s" }

    /// `67 TFLOP/s`, `204 GFLOP/s`, `37 GB/s`, `3.4 TB/s`, `1.98 PFLOP/s` from a giga-rate
    /// (`%g` would print 1,979 TFLOP/s as `1.98e+03`).
    package static func rate(_ giga: Double, unit: String) -> String {
        if giga >= 1e6 { return String(format: "%.3g P", giga / 1e6) + unit }
        return giga >= 1000 ? String(format: "%.3g T", giga / 1000) + unit : String(format: "%.0f G", giga) + unit
    }

    /// An axis decade in one notation: `0.01`, `0.1`, `1`, `10`, `100`, `1k` … `100k`, `1M`, and
    /// `1e-3` below.
    package static func decade(_ exponent: Int) -> String {
        switch exponent {
        case ..<(-2): return "1e\(exponent)"
        case -2: return "0.01"
        case -1: return "0.1"
        case 0...2: return String(Int(pow(10, Double(exponent))))
        default:
            let prefixes = ["k", "M", "G", "T", "P"]
            let group = min(prefixes.count, exponent / 3)
            return String(Int(pow(10, Double(exponent - 3 * group)))) + prefixes[group - 1]
        }
    }

    private func renderTable(
        _ placements: [RooflineModel.Placement], into frame: inout Frame, area: Rect, theme: Theme, focused: Bool
    ) {
        func number(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "—" }
        let showsSuites = self.showsSuites
        let rows = placements.map { p -> [String] in
            [
                p.point.name, shapeCell(p.point, showsSuites: showsSuites),
                String(format: "%.2f", p.point.seconds * 1000),
                number(p.gflopsPerSecond, "%.1f"), number(p.flopsPerByte, "%.2f"), number(p.attainable, "%.0f"),
                number(p.fraction.map { $0 * 100 }, "%.0f%%"),
                p.bound ?? (p.gflopsPerSecond == nil ? "no \(precision)" : "—"),
                baselineCell(p.point),
            ]
        }
        // Widths leave room for the sort mark (` ▼`). The kernel's name keeps at least 20
        // columns; the other columns give way as the table narrows, least telling first.
        let all = [
            TableColumn("kernel", width: .fill(1)), TableColumn("shape", width: .length(showsSuites ? 24 : 14)),
            TableColumn("ms", width: .length(8), alignment: .trailing),
            TableColumn("G" + Self.operations(precision), width: .length(9), alignment: .trailing),
            TableColumn("F/B", width: .length(7), alignment: .trailing),
            TableColumn("roof", width: .length(7), alignment: .trailing),
            TableColumn("%", width: .length(5), alignment: .trailing), TableColumn("bound", width: .length(8)),
            TableColumn("vs base", width: .length(8), alignment: .trailing),
        ]
        let columns = baselineSuite == nil ? Array(all.indices.dropLast()) : Array(all.indices)
        let shown = TableColumn.fitting(
            columns.map { all[$0] }, in: area.width, dropping: [5, 1, 4, 2], fillMinimum: 20)
        var state = list
        TableView(
            columns: shown.map { all[$0] }, rows: rows.map { row in shown.map { row[$0] } },
            sort: shown.firstIndex(of: sort.column).map { TableSort(column: $0, ascending: sort.ascending) },
            focused: focused
        ).render(
            into: &frame,
            area: Rect(x: area.x, y: area.y, width: area.width, height: min(area.height - 2, rows.count + 1)),
            state: &state, theme: theme)
        let selected = list.selected < placements.count ? placements[list.selected] : nil
        if let selected, let level = selected.level {
            // Above 100%: under a memory roof, the level it was judged at is not where its data came
            // from; under the peak, the peak was measured slower than this run went (an older FMA
            // loop, or the machine in a slower phase).
            let above: String
            if (selected.fraction ?? 0) <= 1.005 {
                above = ""
            } else if selected.bound == "compute" {
                above = " · above the peak, measured slower than this run: roofline measure again"
            } else {
                above = " · above that roof: it reuses data from a faster level than \(level)"
            }
            let levels = profile.map { $0.levelPlacements(selected.point, precision: precision) } ?? []
            let perLevel =
                levels.count > 1
                ? " · "
                    + levels.map {
                        "\($0.level) \(String(format: "%.2f", $0.flopsPerByte)) F/B"
                            + ($0.fraction.map { String(format: " %.0f%%", $0 * 100) } ?? "")
                    }.joined(separator: ", ") : ""
            frame.draw(
                "\(selected.point.name): judged at \(level) (\(selected.point.suite))" + perLevel + above,
                at: Point(x: area.x + 1, y: area.maxY - 2),
                style: above.isEmpty ? theme.dim : theme.status(.warn), clip: area)
        }
        frame.draw(
            "roof = min(peak, level GB/s × F/B) · % = G\(Self.operations(precision)) ÷ roof",
            at: Point(x: area.x + 1, y: area.maxY - 1),
            style: theme.dim,
            clip: area)
    }
}
