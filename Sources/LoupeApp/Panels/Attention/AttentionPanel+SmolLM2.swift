import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension AttentionPanel {
    /// The models the panel reads, switched with `m`.
    package enum Model: String, CaseIterable, Hashable, Sendable {
        case miniLM = "MiniLM"
        case smolLM2 = "SmolLM2"
    }

    /// A head statistic of `loupe heads`, the one SmolLM2's grid is shaded by (`c`).
    package enum Statistic: String, CaseIterable, Hashable, Sendable {
        case induction
        case previous = "previous token"
        case sink = "sink mass"
        case entropy

        package func value(_ statistics: CausalAttention.HeadStatistics) -> Double {
            switch self {
            case .induction: statistics.induction
            case .previous: statistics.previousToken
            case .sink: statistics.sinkMass
            case .entropy: statistics.entropy
            }
        }
    }

    /// SmolLM2's side of the panel: its analysis of the text, the head grid's cursor and one
    /// head's pattern with a token cursor. The pattern is the kept layer's rows, computed once
    /// per text and layer; drawing reads only the rows and columns on screen, so a context of
    /// thousands of tokens scrolls as a short one does.
    package struct CausalView: Hashable, Sendable {
        package private(set) var analysis: CausalAttention?
        package private(set) var loading: CausalAttentionRequest?
        /// A layer asked for after the analysis, while its rows are read.
        package private(set) var loadingLayer: Int?
        package private(set) var error: String?
        /// The grid (false) or one head's pattern (true).
        package var showsHead = false
        package var statistic = Statistic.induction
        package private(set) var layer = 0
        package private(set) var head = 0
        /// The pattern's cursor: a query row and a key column (never past the query: causal).
        package private(set) var query = 0
        package private(set) var key = 0

        /// Asks for `text`, keeping the layer under the cursor.
        mutating func analyze(_ text: String) -> [PanelEffect] {
            let request = CausalAttentionRequest(text, layer: layer)
            loading = request
            loadingLayer = nil
            error = nil
            return [.ask(AnalyzeSmolLM2(request: request))]
        }

        mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
            if let (asked, result) = answer.matching(AnalyzeSmolLM2.self), asked.request == loading {
                loading = nil
                switch result {
                case .loaded(let analysis):
                    self.analysis = analysis
                    // The last token (what the model read to predict what comes next), on its diagonal.
                    query = analysis.count - 1
                    key = query
                    return readLayerIfNeeded()
                case .failed(let message): error = UntrustedText.sanitized(message)
                }
            } else if let (asked, result) = answer.matching(ReadSmolLM2Layer.self),
                asked.request.layer == loadingLayer, asked.request.ids == analysis?.ids
            {
                loadingLayer = nil
                switch result {
                case .loaded(let rows): analysis?.kept = rows
                case .failed(let message): error = UntrustedText.sanitized(message)
                }
                return readLayerIfNeeded()
            }
            return []
        }

        /// The pattern view reads the cursor's layer; asks for it when another is kept.
        private mutating func readLayerIfNeeded() -> [PanelEffect] {
            guard showsHead, let analysis, analysis.kept.layer != layer, loadingLayer == nil else { return [] }
            loadingLayer = layer
            return [.ask(ReadSmolLM2Layer(request: AttentionBrowser.LayerRequest(ids: analysis.ids, layer: layer)))]
        }

        mutating func perform(_ action: PanelAction, page: Int) -> [PanelEffect] {
            guard let analysis else { return [] }
            if !showsHead {
                switch action {
                case .left: head = max(0, head - 1)
                case .right: head = min(analysis.heads - 1, head + 1)
                case .up: layer = max(0, layer - 1)
                case .down: layer = min(analysis.layers - 1, layer + 1)
                case .pageUp: layer = max(0, layer - 10)
                case .pageDown: layer = min(analysis.layers - 1, layer + 10)
                case .top: layer = 0
                case .bottom: layer = analysis.layers - 1
                case .open: return toggleView()
                case .specific: break
                }
                return []
            }
            let last = analysis.count - 1
            let before = query
            switch action {
            case .up: query = max(0, query - 1)
            case .down: query = min(last, query + 1)
            case .pageUp: query = max(0, query - page)
            case .pageDown: query = min(last, query + page)
            case .top: query = 0
            case .bottom: query = last
            case .left: key = max(0, key - 1)
            case .right: key = min(query, key + 1)
            case .open, .specific: break
            }
            // The key moves with the query, so the columns in view stay the same distance back
            // (the recent context a long one is read in), never past the query.
            key = min(max(0, key + query - before), query)
            return []
        }

        /// Grid ↔ one head's pattern (`v`, enter in the grid).
        mutating func toggleView() -> [PanelEffect] {
            guard analysis != nil else { return [] }
            showsHead.toggle()
            return readLayerIfNeeded()
        }

        /// The next or previous head, into the next or previous layer past the last or first.
        mutating func step(by delta: Int) -> [PanelEffect] {
            guard let analysis else { return [] }
            let index = min(max(0, layer * analysis.heads + head + delta), analysis.layers * analysis.heads - 1)
            layer = index / analysis.heads
            head = index % analysis.heads
            return readLayerIfNeeded()
        }

        mutating func nextStatistic() {
            let all = Statistic.allCases
            statistic = all[(all.firstIndex(of: statistic)! + 1) % all.count]
        }

        /// The cursor's head's rows, once its layer is read.
        package var rowsShown: CausalAttention.Layer? {
            analysis.flatMap { $0.kept.layer == layer ? $0.kept : nil }
        }
    }
}

// MARK: - Render

extension AttentionPanel.CausalView {
    /// A token as the panel labels it: its position and its text in quotes (so a leading space,
    /// a byte-level "Ġ", shows), sanitised.
    static func label(_ position: Int, _ token: String, width: Int) -> String {
        TextWidth.fit(label(position, token), toColumns: width)
    }

    /// ``label(_:_:width:)`` at its own width, the token cut at 16 columns.
    static func label(_ position: Int, _ token: String) -> String {
        let text = UntrustedText.sanitized(token)
        return "\(position) \"" + (TextWidth.of(text) > 16 ? TextWidth.fit(text, toColumns: 16) : text) + "\""
    }

    /// How a statistic's value shades its cell: probabilities as they are, entropy as a share of
    /// the most a row of this text could have.
    func shade(_ value: Double, _ analysis: CausalAttention) -> Double {
        statistic == .entropy ? min(1, value / log2(Double(max(2, analysis.count)))) : min(1, max(0, value))
    }

    func render(into frame: inout Frame, area body: Rect, theme: Theme) {
        if let loading {
            frame.draw(
                "Running SmolLM2 on “\(UntrustedText.sanitized(String(loading.text.prefix(60))))”: every head's "
                    + "statistics, then layer \(loading.layer)'s rows…",
                at: Point(x: body.x + 1, y: body.y), style: theme.status(.info), clip: body)
            return
        }
        if let error {
            TextView(text: error, style: theme.status(.error)).render(
                into: &frame, area: body.inset(dx: 1, dy: 0), offset: 0, theme: theme)
            return
        }
        guard let analysis else {
            let lines = [
                [
                    Span("Press ", theme.dim), Span("enter", theme.key),
                    Span(" to run SmolLM2 on the text above, ", theme.dim),
                    Span("i", theme.key), Span(" to type another, ", theme.dim), Span("m", theme.key),
                    Span(" for MiniLM.", theme.dim),
                ],
                [
                    Span(
                        "SmolLM2 (30 layers × 9 heads, 3 KV heads) runs in-process, float path; causal.", theme.dim)
                ],
                [
                    Span("The same from a shell: ", theme.dim),
                    Span("loupe attention --model smollm2 \"text\" --layer L", theme.accent), Span(" · ", theme.dim),
                    Span("loupe heads \"text\"", theme.accent),
                ],
            ]
            for (index, line) in lines.enumerated() {
                frame.draw(line, at: Point(x: body.x + 1, y: body.y + index), clip: body)
            }
            return
        }
        if showsHead {
            renderHead(analysis, into: &frame, area: body, theme: theme)
        } else {
            renderGrid(analysis, into: &frame, area: body, theme: theme)
        }
    }

    // MARK: Grid

    /// The 30 × 9 grid, each cell the chosen statistic's value shaded by it, the query heads
    /// grouped under the key/value head they read; beside it the cursor's head in numbers.
    private func renderGrid(_ analysis: CausalAttention, into frame: inout Frame, area: Rect, theme: Theme) {
        let cellWidth = 4
        let labelWidth = 4
        let gridWidth = labelWidth + analysis.heads * (cellWidth + 1) + 1
        frame.draw(
            [
                Span("shaded by ", theme.dim), Span(statistic.rawValue, theme.title), Span(" (c) · ", theme.dim),
                Span(
                    "\(analysis.layers) layers × \(analysis.heads) query heads, \(analysis.groupSize) per KV head · causal",
                    theme.dim),
            ], at: Point(x: area.x + 1, y: area.y), clip: area)
        // The key/value heads over the query heads that read them.
        for group in Set(analysis.keyValueHeads).sorted() {
            let members = analysis.keyValueHeads.indices.filter { analysis.keyValueHeads[$0] == group }
            guard let first = members.first else { continue }
            let x = area.x + labelWidth + first * (cellWidth + 1)
            let width = members.count * (cellWidth + 1) - 1
            let name = " KV \(group) "
            let left = max(0, (width - name.count) / 2)
            let right = max(0, width - name.count - left)
            frame.draw(
                String(repeating: "─", count: left) + name + String(repeating: "─", count: right),
                at: Point(x: x, y: area.y + 1), style: theme.dim, clip: area)
        }
        for head in 0..<analysis.heads {
            frame.draw(
                TextWidth.fit("H\(head)", toColumns: cellWidth, alignment: .center),
                at: Point(x: area.x + labelWidth + head * (cellWidth + 1), y: area.y + 2),
                style: head == self.head ? theme.selection : theme.dim, clip: area)
        }
        let top = area.y + 3
        let rows = max(1, area.maxY - 1 - top)
        let first = max(0, min(layer - rows / 2, analysis.layers - rows))
        for layer in first..<min(analysis.layers, first + rows) {
            let y = top + layer - first
            frame.draw(
                "L\(layer)", at: Point(x: area.x, y: y), style: layer == self.layer ? theme.selection : theme.dim,
                clip: area)
            for head in 0..<analysis.heads {
                let value = statistic.value(analysis.statistics(layer: layer, head: head))
                let text = TextWidth.fit(
                    value < 10 ? String(format: "%.2f", value) : String(format: "%.1f", value), toColumns: cellWidth,
                    alignment: .trailing)
                let selected = layer == self.layer && head == self.head
                let style: Style =
                    selected
                    ? theme.selection
                    : theme.isMonochrome
                        ? (shade(value, analysis) >= 0.5 ? Style(attributes: .bold) : theme.dim)
                        : Style(
                            foreground: shade(value, analysis) > 0.55 ? RGB(0, 0, 0) : RGB(255, 255, 255),
                            background: theme.heatColor(shade(value, analysis)))
                frame.draw(
                    text, at: Point(x: area.x + labelWidth + head * (cellWidth + 1), y: y), style: style, clip: area)
            }
        }
        if analysis.layers > rows {
            Scrollbar.render(
                into: &frame, x: area.x + gridWidth - 1, rows: Rect(x: area.x, y: top, width: gridWidth, height: rows),
                offset: first, count: analysis.layers, theme: theme)
        }
        frame.draw(
            statistic == .entropy
                ? "entropy in bits, shaded as a share of log2(tokens) · enter: the head's pattern"
                : "mean probability · enter: the head's pattern",
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
        let side = Rect(
            x: area.x + gridWidth + 1, y: area.y + 1, width: area.maxX - gridWidth - 1 - area.x, height: area.height - 2
        )
        if side.width >= 18 { renderHeadNumbers(analysis, into: &frame, area: side, theme: theme) }
    }

    /// The cursor's head as `loupe heads` gives it, and the strongest heads by the statistic.
    private func renderHeadNumbers(_ analysis: CausalAttention, into frame: inout Frame, area: Rect, theme: Theme) {
        let numbers = analysis.statistics(layer: layer, head: head)
        var lines: [[Span]] = [
            [Span("L\(layer) H\(head)", theme.title), Span(" reads KV head \(numbers.keyValueHead)", theme.dim)],
            [Span(String(format: "entropy   %6.3f bits", numbers.entropy), theme.text)],
            [Span(String(format: "sink      %6.3f", numbers.sinkMass), theme.text)],
            [Span(String(format: "previous  %6.3f", numbers.previousToken), theme.text)],
            [Span(String(format: "induction %6.3f", numbers.induction), theme.text)],
            [Span("induction on \(analysis.period) random tokens ×2, seed \(analysis.seed)", theme.dim)],
            [],
            [
                Span(
                    statistic == .entropy ? "sharpest (lowest entropy)" : "strongest \(statistic.rawValue)", theme.title
                )
            ],
        ]
        let ordered = analysis.statistics.sorted {
            statistic == .entropy
                ? statistic.value($0) < statistic.value($1) : statistic.value($0) > statistic.value($1)
        }
        for entry in ordered.prefix(max(0, area.height - lines.count)) {
            lines.append([
                Span("L\(entry.layer)H\(entry.head)".padding(toLength: 7, withPad: " ", startingAt: 0), theme.text),
                Span(String(format: "%.3f", statistic.value(entry)), theme.dim),
            ])
        }
        for (index, line) in lines.enumerated() where index < area.height {
            frame.draw(line, at: Point(x: area.x, y: area.y + index), clip: area)
        }
    }

    // MARK: One head

    /// One head's rows around the cursor (never more than the screen holds), with what the
    /// cursor's query attends to most beside them.
    private func renderHead(_ analysis: CausalAttention, into frame: inout Frame, area: Rect, theme: Theme) {
        guard let rows = rowsShown else {
            frame.draw(
                "Reading layer \(layer)'s rows…", at: Point(x: area.x + 1, y: area.y), style: theme.status(.info),
                clip: area)
            return
        }
        let t = analysis.count
        let sideWidth = area.width >= 100 ? 36 : 26
        let labelWidth = min(16, max(11, area.width / 8))
        let matrixWidth = area.width - labelWidth - sideWidth - 2
        // Cells grow with the room a short text leaves (up to 6 columns a key), 2 for long ones.
        let cellWidth = max(2, min(6, matrixWidth / max(1, t)) / 2 * 2)
        let columns = max(1, min(t, matrixWidth / cellWidth))
        let shownRows = max(1, min(t, area.height - 3))
        // Keys past the query are never read: the columns end at the query when they can.
        let firstKey = max(0, min(key - columns / 2, query + 1 - columns))
        let firstQuery = max(0, min(query - shownRows / 2, t - shownRows))
        let row = rows.row(head: head, query: query)
        let probability = row[row.startIndex + key]
        frame.draw(
            [
                Span("L\(layer) H\(head)", theme.title),
                Span(" · KV head \(analysis.keyValueHeads[head]) · ", theme.dim),
                Span(
                    Self.label(query, analysis.tokens[query]) + " → " + Self.label(key, analysis.tokens[key])
                        + String(format: " %.3f", probability), theme.text),
            ], at: Point(x: area.x + 1, y: area.y), clip: area)
        let left = area.x + labelWidth
        for column in 0..<columns where (firstKey + column) % (cellWidth > 2 ? 5 : 10) == 0 {
            frame.draw(
                String(firstKey + column), at: Point(x: left + column * cellWidth, y: area.y + 1), style: theme.dim,
                clip: Rect(x: left, y: area.y, width: columns * cellWidth, height: area.height))
        }
        let top = area.y + 2
        for offset in 0..<shownRows {
            let q = firstQuery + offset
            let y = top + offset
            frame.draw(
                Self.label(q, analysis.tokens[q], width: labelWidth - 1), at: Point(x: area.x, y: y),
                style: q == query ? theme.selection : theme.text, clip: area)
            let values = rows.row(head: head, query: q)
            for column in 0..<columns {
                let k = firstKey + column
                let x = left + column * cellWidth
                guard k <= q else {
                    // Causal: a query never reads a later key.
                    frame.put(" ", x: x, y: y, style: .plain)
                    continue
                }
                let p = Double(values[values.startIndex + k])
                if q == query && k == key {
                    let style =
                        theme.isMonochrome
                        ? Style(attributes: .reverse)
                        : Style(foreground: RGB(255, 255, 255), background: theme.heatColor(p))
                    frame.draw(
                        "[" + String(repeating: " ", count: cellWidth - 2) + "]", at: Point(x: x, y: y), style: style,
                        clip: area)
                    continue
                }
                let glyph = theme.isMonochrome ? ["·", "░", "▒", "▓", "█"][min(4, Int(p * 4.999))] : "█"
                let style = theme.isMonochrome ? Style.plain : Style(foreground: theme.heatColor(p))
                for dx in 0..<cellWidth { frame.put(glyph, x: x + dx, y: y, style: style) }
            }
        }
        var hidden: [String] = []
        if firstQuery > 0 { hidden.append("▲ \(firstQuery)") }
        if firstQuery + shownRows < t { hidden.append("▼ \(t - firstQuery - shownRows)") }
        if firstKey > 0 { hidden.append("◀ \(firstKey)") }
        if firstKey + columns < t { hidden.append("▶ \(t - firstKey - columns)") }
        var legend = Point(x: area.x + 1, y: area.maxY - 1)
        legend.x += frame.draw("row query, column key: 0 ", at: legend, style: theme.dim, clip: area)
        for step in 0...8 {
            let p = Double(step) / 8
            let glyph = theme.isMonochrome ? ["·", "░", "▒", "▓", "█"][min(4, Int(p * 4.999))] : "█"
            legend.x += frame.draw(
                glyph, at: legend, style: theme.isMonochrome ? .plain : Style(foreground: theme.heatColor(p)),
                clip: area)
        }
        frame.draw(
            " 1" + (hidden.isEmpty ? "" : " · more: " + hidden.joined(separator: " ")) + " · [ ] head · esc grid",
            at: legend, style: theme.dim, clip: area)
        let side = Rect(x: area.maxX - sideWidth, y: top, width: sideWidth, height: area.maxY - 1 - top)
        renderAttendsTo(analysis, into: &frame, area: side, theme: theme)
    }

    /// The keys the cursor's query reads most, with their probabilities.
    private func renderAttendsTo(_ analysis: CausalAttention, into frame: inout Frame, area: Rect, theme: Theme) {
        frame.draw(
            TextWidth.fit("\(query) attends to", toColumns: area.width), at: Point(x: area.x, y: area.y),
            style: theme.title, clip: area)
        let labelWidth = min(18, area.width / 2)
        for (offset, entry) in analysis.top(head: head, query: query, limit: max(0, area.height - 1)).enumerated() {
            let y = area.y + 1 + offset
            frame.draw(
                Self.label(entry.key, analysis.tokens[entry.key], width: labelWidth), at: Point(x: area.x, y: y),
                style: entry.key == key ? theme.accent : theme.text, clip: area)
            Gauge(fraction: Double(entry.probability), label: String(format: "%.3f", entry.probability)).render(
                into: &frame,
                area: Rect(x: area.x + labelWidth + 1, y: y, width: area.width - labelWidth - 1, height: 1),
                theme: theme)
        }
    }
}
