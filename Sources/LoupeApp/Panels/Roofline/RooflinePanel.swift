import Foundation
import LoupeTUI

/// The machine's roofs with measured kernels placed under them: a log-log braille chart
/// (x = FLOP/byte, y = GFLOP/s) beside a table of the kernels.
package struct RooflinePanel: Panel {
    package let id = PanelID.roofline
    package let title = "Roofline"

    package private(set) var data: RooflineData?
    package var list = ListState()

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "Roofline",
            [
                KeyBinding(
                    [.character("r")], .panel(.custom("reload")),
                    help: "Reload the roofs and kernels from the workspace", footer: "reload")
            ])
    }

    package var initialEffects: [PanelEffect] { [.app(.loadRoofline)] }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        if case .rooflineLoaded(let loaded) = msg { data = loaded }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        let count = data?.points.count ?? 0
        switch action {
        case .down: list.move(by: 1, count: count)
        case .up: list.move(by: -1, count: count)
        case .top: list.jump(toEnd: false, count: count)
        case .bottom: list.jump(toEnd: true, count: count)
        case .custom("reload"): return [.app(.loadRoofline)]
        default: break
        }
        return []
    }

    /// The memory roof a kernel is judged against: the slowest level (DRAM), the honest bound
    /// for data that does not stay in cache.
    private func memoryRoof(_ data: RooflineData) -> RooflineData.Ceiling? {
        data.ceilings.filter { $0.kind == "memory" }.min { $0.value < $1.value }
    }

    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let inner = Block(title: "Roofline", trailingTitle: data?.machine ?? "", focused: context.focused).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 8 else { return }
        guard let data, let peak = data.peak else {
            let lines = [
                [
                    Span(
                        data == nil ? "Reading the workspace…" : "No machine profile in this workspace yet.", theme.text
                    )
                ],
                [
                    Span("Measure this machine with ", theme.dim), Span("loupe roofline measure", theme.accent),
                    Span(", and MiniLM's kernels with ", theme.dim), Span("loupe bench embed --ops", theme.accent),
                ],
                [Span("then press ", theme.dim), Span("r", theme.key), Span(" to reload.", theme.dim)],
            ]
            for (index, line) in lines.enumerated() {
                frame.draw(line, at: Point(x: inner.x + 1, y: inner.y + 1 + index), clip: inner)
            }
            return
        }
        let tableWidth = min(62, inner.width / 2)
        let parts = inner.split(.horizontal, [.fill(1), .length(tableWidth)])
        renderChart(data, peak: peak, into: &frame, area: parts[0], theme: theme)
        renderTable(data, peak: peak, into: &frame, area: parts[1], theme: theme, focused: context.focused)
    }

    private func renderChart(_ data: RooflineData, peak: Double, into frame: inout Frame, area: Rect, theme: Theme) {
        let plot = Rect(x: area.x + 7, y: area.y, width: area.width - 8, height: area.height - 2)
        guard plot.width > 10, plot.height > 4 else { return }
        var canvas = BrailleCanvas(columns: plot.width, rows: plot.height)
        let memory = data.ceilings.filter { $0.kind == "memory" }
        let intensities = data.points.map(\.flopsPerByte).filter { $0 > 0 } + memory.map { peak / $0.value }
        let xLow = floor(log10(min(0.1, (intensities.min() ?? 1) / 2)))
        let xHigh = ceil(log10(max(100, (intensities.max() ?? 1) * 2)))
        let rates = data.points.map(\.gflopsPerSecond).filter { $0 > 0 }
        let yLow = floor(log10(min(1, (rates.min() ?? 1) / 2)))
        let yHigh = ceil(log10(peak * 1.5))
        func point(_ x: Double, _ y: Double) -> Point {
            let px = (log10(x) - xLow) / (xHigh - xLow) * Double(canvas.dotWidth - 1)
            let py = Double(canvas.dotHeight - 1) - (log10(y) - yLow) / (yHigh - yLow) * Double(canvas.dotHeight - 1)
            return Point(x: Int(px.rounded()), y: Int(py.rounded()))
        }
        let computeStyle =
            theme.isMonochrome ? Style(attributes: .bold) : Style(foreground: theme.color(.rooflineCompute))
        let memoryStyle = theme.isMonochrome ? Style() : Style(foreground: theme.color(.rooflineMemory))
        let ridgeLow = memory.map { peak / $0.value }.min() ?? pow(10, xLow)
        canvas.line(from: point(ridgeLow, peak), to: point(pow(10, xHigh), peak), style: computeStyle)
        for roof in memory {
            let start = max(pow(10, xLow), pow(10, yLow) / roof.value)
            canvas.line(from: point(start, roof.value * start), to: point(peak / roof.value, peak), style: memoryStyle)
        }
        canvas.render(into: &frame, origin: Point(x: plot.x, y: plot.y))
        // Kernel points over the lines, the selected one marked.
        for (index, kernel) in data.points.enumerated() where kernel.flopsPerByte > 0 && kernel.gflopsPerSecond > 0 {
            let dot = point(kernel.flopsPerByte, kernel.gflopsPerSecond)
            let x = plot.x + dot.x / 2
            let y = plot.y + dot.y / 4
            guard plot.contains(Point(x: x, y: y)) else { continue }
            let selected = index == list.selected
            let style =
                selected
                ? theme.selection
                : (theme.isMonochrome ? Style(attributes: .bold) : Style(foreground: theme.color(.rooflinePoint)))
            frame.draw(selected ? "◆" : "●", at: Point(x: x, y: y), style: style)
        }
        // Labels: roofs at their right ends, decades on both axes.
        let computeLabel = String(
            format: "%@ %.0f GFLOP/s", data.ceilings.first { $0.kind == "compute" }?.name ?? "peak", peak)
        frame.draw(
            computeLabel,
            at: Point(x: plot.maxX - TextWidth.of(computeLabel) - 1, y: plot.y + point(1, peak).y / 4 - 1),
            style: computeStyle, clip: plot)
        for roof in memory {
            let at = point(peak / roof.value, peak)
            frame.draw(
                String(format: "%@ %.0f GB/s", roof.name, roof.value),
                at: Point(
                    x: max(plot.x, plot.x + at.x / 2 - 14), y: plot.y + at.y / 4 + 1 + memory.firstIndex(of: roof)!),
                style: memoryStyle, clip: plot)
        }
        for decade in Int(yLow)...Int(yHigh) {
            let y = plot.y + point(1, pow(10, Double(decade))).y / 4
            frame.draw(
                TextWidth.fit(Self.decade(decade), toColumns: 6, alignment: .trailing), at: Point(x: area.x, y: y),
                style: theme.dim, clip: area)
        }
        for decade in Int(xLow)...Int(xHigh) {
            let x = plot.x + point(pow(10, Double(decade)), 1).x / 2
            frame.draw(
                Self.decade(decade), at: Point(x: min(x, plot.maxX - 4), y: plot.maxY), style: theme.dim, clip: area)
        }
        frame.draw("FLOP/byte →   ↑ GFLOP/s", at: Point(x: plot.x, y: plot.maxY + 1), style: theme.dim, clip: area)
    }

    private static func decade(_ exponent: Int) -> String {
        switch exponent {
        case ..<(-2): return "1e\(exponent)"
        case -2: return "0.01"
        case -1: return "0.1"
        default: return exponent <= 4 ? String(Int(pow(10, Double(exponent)))) : "1e\(exponent)"
        }
    }

    private func renderTable(
        _ data: RooflineData, peak: Double, into frame: inout Frame, area: Rect, theme: Theme, focused: Bool
    ) {
        let roof = memoryRoof(data)
        let rows = data.points.map { kernel -> [String] in
            let attainable = min(peak, (roof?.value ?? peak) * kernel.flopsPerByte)
            let bound = roof.map { kernel.flopsPerByte < peak / $0.value ? "memory" : "compute" } ?? "?"
            return [
                kernel.name, String(format: "%.1f", kernel.milliseconds),
                String(format: "%.1f", kernel.gflopsPerSecond),
                String(format: "%.1f", kernel.flopsPerByte),
                String(format: "%.0f%%", kernel.gflopsPerSecond / max(1e-9, attainable) * 100), bound,
            ]
        }
        let columns = [
            TableColumn("kernel (minilm-forward)", width: .fill(1)),
            TableColumn("ms", width: .length(6), alignment: .trailing),
            TableColumn("GFLOP/s", width: .length(7), alignment: .trailing),
            TableColumn("F/B", width: .length(5), alignment: .trailing),
            TableColumn("% roof", width: .length(6), alignment: .trailing), TableColumn("bound", width: .length(7)),
        ]
        var state = list
        TableView(columns: columns, rows: rows, focused: focused).render(
            into: &frame,
            area: Rect(x: area.x, y: area.y, width: area.width, height: min(area.height - 2, rows.count + 1)),
            state: &state, theme: theme)
        if let roof {
            frame.draw(
                String(format: "%% roof: of min(peak, %@ × F/B); ridge %.1f F/B", roof.name, peak / roof.value),
                at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
        }
    }
}
