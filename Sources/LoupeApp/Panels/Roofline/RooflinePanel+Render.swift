import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension RooflinePanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let count = data?.profiles.count ?? 0
        // A trace step's forward pass names itself; esc goes back to every kernel.
        let title =
            focus.map { "Roofline · " + UntrustedText.sanitized($0.title) + " · esc: all kernels" } ?? "Roofline"
        // The precision and which profile of how many always show: a long device name
        // ("NVIDIA H100 80GB HBM3 (ncu FILE)") gives way to them.
        let trailing = profile.map { profile -> String in
            let suffix = " · \(precision)" + (count > 1 ? " · \(profileIndex + 1)/\(count)" : "")
            let room = (area.width - 4) / 2 - TextWidth.of(suffix)  // a Block's trailing title has half its edge
            return TextWidth.truncate(UntrustedText.sanitized(profile.name), toColumns: max(8, room)) + suffix
        }
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
        // The legend under the chart wraps onto the rows it needs (up to three) rather than cut a
        // roof's figure: the chart is drawn again, shorter, when one row did not hold it.
        var oneRowLegend = frame
        let legendRows = renderChart(
            profile, rows: rows, peak: peak, legendRows: 1, into: &oneRowLegend, area: parts[0], theme: theme)
        if legendRows > 1 {
            renderChart(
                profile, rows: rows, peak: peak, legendRows: min(3, legendRows), into: &frame, area: parts[0],
                theme: theme)
        } else {
            frame = oneRowLegend
        }
        if !parts[1].isEmpty {
            renderTable(rows, into: &frame, area: parts[1], theme: theme, focused: context.focused)
        }
    }

    /// Draws the chart, its axes and the legend under it in `legendRows` rows; returns the rows the
    /// legend needs whole (more than `legendRows` when it was cut).
    @discardableResult
    private func renderChart(
        _ profile: RooflineModel.Profile, rows: [RooflineModel.Placement], peak: Double, legendRows: Int,
        into frame: inout Frame, area: Rect, theme: Theme
    ) -> Int {
        // A chart shorter than five rows keeps them: its legend is cut instead.
        let legendRows = max(1, min(legendRows, area.height - 6))
        let plot = Rect(x: area.x + 7, y: area.y, width: area.width - 8, height: area.height - 1 - legendRows)
        guard plot.width > 10, plot.height > 4 else { return 1 }
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
        // Each roof also alone (its value and its dots), to tell its own line from the others'
        // where its label goes; the plotted precision's peak from the first ridge, bold.
        let starts = others.map { roof in
            (roof.value, memory.map { roof.value / $0.value }.min() ?? pow(10, xLow), theme.dim)
        }
        var roofLines: [(value: Double, canvas: BrailleCanvas)] = []
        for (value, start, style) in starts + [(peak, ridgeLow, computeStyle)] {
            let (from, to) = (point(start, value), point(pow(10, xHigh), value))
            canvas.line(from: from, to: to, style: style)
            var alone = BrailleCanvas(columns: canvas.columns, rows: canvas.rows)
            alone.line(from: from, to: to, style: style)
            roofLines.append((value, alone))
        }
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
        // A label covers, and touches across a gap, no line but its own: beside another roof's
        // line it would name that one (L2's label against the L1 diagonal at 80×24).
        func onlyOwnLines(_ rect: Rect, own: [BrailleCanvas]) -> Bool {
            for y in rect.y..<rect.maxY {
                for x in rect.x..<rect.maxX {
                    let (column, row) = (x - origin.x, y - origin.y)
                    if lines.hasDots(column: column, row: row),
                        !own.contains(where: { $0.hasDots(column: column, row: row) })
                    {
                        return false
                    }
                }
            }
            return true
        }
        var marks = Set<Point>()
        func mark(_ text: String, at: Point, style: Style) {
            guard plot.contains(at) else { return }
            frame.draw(text, at: at, style: style)
            placer.reserve(Rect(x: at.x, y: at.y, width: 1, height: 1))
            marks.insert(at)
        }
        // A label's ends stay a cell away from any mark, so it does not read as the kernel's.
        func apartFromMarks(_ at: Point, width: Int) -> Bool {
            !marks.contains(Point(x: at.x - 1, y: at.y)) && !marks.contains(Point(x: at.x + width, y: at.y))
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
        // above or below (one no other roof is drawn on), between its neighbours' labels; it
        // covers no other roof's line. With no roof of its own (Tensor FLOPs from ncu's tensor
        // pipe), the top line is the fastest roof the profile has, named as itself.
        let fastest = profile.computeCeilings.max { $0.value < $1.value }
        let ownRoof = profile.peak(precision)
        let peakName = ownRoof?.name ?? fastest?.name ?? precision
        let roofs =
            ([(peakName, peak, ownRoof == nil ? (fastest?.precision ?? precision) : precision)]
            + others.map { ($0.name, $0.value, $0.precision ?? "FP32") }
            // A roof as fast as the peak (the H100's FP64 tensor and FP32, 67 TFLOP/s) shares its
            // line and is named beside it, not left out.
            + compute.filter { $0.value == peak && $0.name != peakName }.map {
                ($0.name, $0.value, $0.precision ?? "FP32")
            }).sorted { $0.1 > $1.1 }
        // Each row's label in full, else short (the names without their parenthesis: "FP32 (2
        // cores)" as "FP32"); a row of several roofs with room for one names the peak (or its
        // fastest) alone, the others under the chart.
        var groups: [(row: Int, parts: [(full: String, short: String, isPeak: Bool)], start: Int)] = []
        for (name, value, roofPrecision) in roofs {
            let rate = " " + RooflineFormat.rate(value, unit: RooflineFormat.operations(roofPrecision))
            let short = name.firstIndex(of: "(").map { name[..<$0].trimmingCharacters(in: .whitespaces) } ?? name
            let part = (full: name + rate, short: short + rate, isPeak: value == peak)
            let row = cell(point(1, value)).y
            let start = cell(point(memory.map { value / $0.value }.min() ?? pow(10, xLow), value)).x
            if let last = groups.last, last.row == row {
                groups[groups.count - 1].parts.append(part)
                groups[groups.count - 1].start = min(last.start, start)
            } else {
                groups.append((row, [part], start))
            }
        }
        var labelAbove = Int.min
        for (index, group) in groups.enumerated() {
            let below = index + 1 < groups.count ? groups[index + 1].row : Int.max
            // On a row: over the line's right end, moving left as kernels require while a few of
            // its cells stay in sight before the label; else just before the line's start.
            let own = roofLines.filter { cell(point(1, $0.value)).y == group.row }.map(\.canvas)
            func along(_ row: Int, width: Int) -> [[Point]] {
                [
                    stride(from: plot.maxX - width, through: group.start + 4, by: -1).map { Point(x: $0, y: row) }
                        .filter { onlyOwnLines(Rect(x: $0.x, y: row, width: width, height: 1), own: own) },
                    // The cells between it and the line's start are the diagonal that leads
                    // into the roof: the roofline's elbow, where its label reads as the roof's.
                    (0..<4).map { Point(x: group.start - 1 - width - $0, y: row) }.filter {
                        onlyOwnLines(Rect(x: $0.x, y: row, width: width, height: 1), own: own)
                    },
                ]
            }
            // The rows beside its line, when no other roof is drawn on them.
            let rows = groups.map(\.row)
            let tries = ([group.row] + [group.row - 1, group.row + 1].filter { $0 < below && !rows.contains($0) })
                .filter { $0 > labelAbove }
            // Its own row with a shorter label before a row beside it with the full one.
            let full = group.parts.map(\.full).joined(separator: " · ")
            let alone = group.parts.firstIndex(where: \.isPeak) ?? 0
            var labels = [full, group.parts.map(\.short).joined(separator: " · ")]
            if group.parts.count > 1 { labels.append(group.parts[alone].short) }
            var placed: (label: String, at: Point)?
            for row in tries {
                for label in labels where placed == nil {
                    let width = TextWidth.of(" " + label)
                    for candidates in along(row, width: width) where placed == nil {
                        placed = placer.place(
                            width: width, candidates: candidates.filter { apartFromMarks($0, width: width) }
                        ).map { (label, $0) }
                    }
                }
            }
            let holdsPeak = group.parts.contains(where: \.isPeak)
            if let placed {
                frame.draw(" " + placed.label, at: placed.at, style: holdsPeak ? computeStyle : theme.dim, clip: plot)
                labelAbove = placed.at.y
                if placed.label == labels.last, labels.count == 3 {
                    var others = group.parts
                    others.remove(at: alone)
                    unplaced += others.map(\.full)
                }
            } else {
                unplaced += group.parts.map(\.full)
            }
        }
        // Memory roofs, the fastest first: each label beside its own diagonal, on a row the
        // diagonal crosses below the peak's, and below the faster levels' labels (the order of the
        // lines); with no such place (two levels within a few columns), it goes under the chart.
        let peakRow = cell(point(1, peak)).y
        labelAbove = peakRow
        for (roof, alone) in zip(memory, diagonals) {
            let text = "\(roof.name) \(RooflineFormat.rate(roof.value, unit: "B/s"))"
            let width = TextWidth.of(text)
            var candidates: [Point] = []
            for row in 0..<alone.rows where origin.y + row > labelAbove {
                let columns = (0..<alone.columns).filter { alone.hasDots(column: $0, row: row) }
                guard let first = columns.first, let last = columns.last else { continue }
                // Before its first cell or after its last, one blank cell between; the label and
                // that cell clear of every other line.
                let (before, after) = (origin.x + first - width - 1, origin.x + last + 1)
                if onlyOwnLines(Rect(x: before, y: origin.y + row, width: width + 1, height: 1), own: [alone]) {
                    candidates.append(Point(x: before, y: origin.y + row))
                }
                if onlyOwnLines(Rect(x: after, y: origin.y + row, width: width + 1, height: 1), own: [alone]) {
                    candidates.append(Point(x: after + 1, y: origin.y + row))
                }
            }
            if let spot = placer.place(width: width, candidates: candidates.filter { apartFromMarks($0, width: width) })
            {
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
        let operation = RooflineFormat.operations(precision).dropLast(2)
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
        // the axes' units, which the table's header also gives. Each roof stays whole on one row;
        // past the rows given, the last row ends in "…".
        let items: [(spans: [Span], isRoof: Bool)] =
            (named.isEmpty ? [] : [(named, false)]) + unplaced.map { ([Span($0, theme.dim)], true) }
            + [([Span(legend, theme.dim)], false)]
        let legendLines = Self.wrapped(items, toColumns: area.maxX - plot.x)
        for (index, line) in legendLines.prefix(legendRows).enumerated() {
            let cut = index == legendRows - 1 && legendLines.count > legendRows ? line + [Span(" …", theme.dim)] : line
            frame.draw(
                cut.truncated(toColumns: area.maxX - plot.x), at: Point(x: plot.x, y: plot.maxY + 1 + index),
                clip: area)
        }
        return legendLines.count
    }

    /// The legend's items in rows of `columns`, in order, none split: roofs one after another
    /// joined by " · ", other items three spaces apart. An item wider than a row has one of its own.
    static func wrapped(_ items: [(spans: [Span], isRoof: Bool)], toColumns columns: Int) -> [[Span]] {
        var lines: [[Span]] = []
        var line: [Span] = []
        var lastWasRoof = false
        for (spans, isRoof) in items {
            var separator = isRoof && lastWasRoof ? " · " : "   "
            // The named kernel's spans end in their own gap.
            if line.last?.text.hasSuffix("   ") == true { separator = "" }
            if !line.isEmpty, line.width + TextWidth.of(separator) + spans.width > columns {
                lines.append(line)
                line = []
            }
            if !line.isEmpty { line.append(Span(separator, spans.first?.style ?? Style())) }
            line += spans
            lastWasRoof = isRoof
        }
        if !line.isEmpty { lines.append(line) }
        return lines
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
    package static func levelMark(_ level: String) -> String {
        level.hasPrefix("L") && level.count == 2 ? String(level.last!) : String(level.prefix(1))
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
        let showsSuites = self.showsSuites
        let operations = RooflineFormat.operations(precision)
        let rows = placements.map { p -> [String] in
            [
                p.point.name, shapeCell(p.point, showsSuites: showsSuites), RooflineFormat.duration(p.point.seconds),
                p.gflopsPerSecond.map { RooflineFormat.rate($0, unit: operations) } ?? "—",
                p.flopsPerByte.map(RooflineFormat.intensity) ?? "—",
                p.attainable.map { RooflineFormat.rate($0, unit: operations) } ?? "—",
                p.fraction.map(RooflineFormat.percent) ?? "—",
                p.bound ?? (p.gflopsPerSecond == nil ? "no \(precision)" : "—"),
                baselineCell(p.point),
            ]
        }
        // Widths leave room for the sort mark (` ▼`). The kernel's name keeps at least 20
        // columns; the other columns give way as the table narrows, least telling first.
        let all = [
            TableColumn("kernel", width: .fill(1)), TableColumn("shape", width: .length(showsSuites ? 24 : 14)),
            TableColumn("time", width: .length(8), alignment: .trailing),
            TableColumn(operations, width: .length(12), alignment: .trailing),
            TableColumn("F/B", width: .length(8), alignment: .trailing),
            TableColumn("roof", width: .length(12), alignment: .trailing),
            TableColumn("%", width: .length(8), alignment: .trailing), TableColumn("bound", width: .length(8)),
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
        // A line cut at the edge ends in "…", so a reader knows there is more.
        let room = area.width - 1
        if let selected, let level = selected.level {
            let levels = profile.map { $0.levelPlacements(selected.point, precision: precision) } ?? []
            let perLevel =
                levels.count > 1
                ? " · "
                    + levels.map {
                        "\($0.level) \(RooflineFormat.intensity($0.flopsPerByte)) F/B"
                            + ($0.fraction.map { " " + RooflineFormat.percent($0) } ?? "")
                    }.joined(separator: ", ") : ""
            // Above its roof, the real figure and what to check come first: a measured peak, a
            // bandwidth or the bytes counted are off.
            let above = selected.fraction.flatMap { fraction in
                RooflineFormat.isAboveRoof(fraction)
                    ? " · " + RooflineFormat.percent(fraction) + " "
                        + RooflineFormat.aboveRoofWarning(bound: selected.bound, level: level) : nil
            }
            frame.draw(
                TextWidth.truncate(
                    UntrustedText.sanitized(selected.point.name)
                        + ": judged at \(level) (\(UntrustedText.sanitized(selected.point.suite)))" + (above ?? "")
                        + perLevel,
                    toColumns: room),
                at: Point(x: area.x + 1, y: area.maxY - 2),
                style: above == nil ? theme.dim : theme.status(.warn), clip: area)
        }
        frame.draw(
            TextWidth.truncate(
                "roof = min(peak, level B/s × F/B) · % = \(RooflineFormat.operations(precision)) ÷ roof",
                toColumns: room),
            at: Point(x: area.x + 1, y: area.maxY - 1),
            style: theme.dim,
            clip: area)
    }
}
