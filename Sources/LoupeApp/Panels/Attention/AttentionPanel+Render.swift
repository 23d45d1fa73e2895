import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension AttentionPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let trailing: String
        if model == .smolLM2 {
            trailing = smolLM2.analysis.map { "\($0.count) tokens · \(smolLM2.showsHead ? "Head" : "Head grid")" } ?? ""
        } else {
            trailing = analysis.map { "\($0.count) tokens · \(view.rawValue)" } ?? ""
        }
        let inner = Block(title: "Attention · \(model.rawValue)", trailingTitle: trailing, focused: context.focused)
            .render(into: &frame, area: area, theme: theme)
        guard inner.height >= 4, inner.width >= 20 else { return }
        let first = editingField == 0
        input.render(
            into: &frame, area: inner.row(0),
            prompt: [
                Span(
                    model == .smolLM2 ? (first ? "text › " : "text   ") : (first ? "sentence › " : "sentence   "),
                    first ? theme.key : theme.dim)
            ],
            style: first ? theme.input : theme.text, showCursor: first)
        var bodyTop = inner.y + 2
        if let secondInput, model == .miniLM {
            let second = editingField == 1
            secondInput.render(
                into: &frame, area: inner.row(1),
                prompt: [Span(second ? "pair     › " : "pair       ", second ? theme.key : theme.dim)],
                style: second ? theme.input : theme.accent, showCursor: second)
            bodyTop += 1
        }
        let body = Rect(x: inner.x, y: bodyTop, width: inner.width, height: inner.maxY - bodyTop)
        if model == .smolLM2 { return smolLM2.render(into: &frame, area: body, theme: theme) }
        if let loading {
            let what = loading.second.map { "“\(loading.first)” + “\($0)”" } ?? "“\(loading.first)”"
            frame.draw(
                "Running MiniLM on \(what)…", at: Point(x: body.x + 1, y: body.y), style: theme.status(.info),
                clip: body)
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
                    Span("Press ", theme.dim), Span("i", theme.key), Span(" to type a sentence, ", theme.dim),
                    Span("enter", theme.key), Span(" to analyse the one above.", theme.dim),
                ],
                [
                    Span(
                        "MiniLM (6 layers × 12 heads) runs in-process; every head's attention is kept for this text.",
                        theme.dim)
                ],
                [
                    Span("The same from a shell: ", theme.dim),
                    Span("loupe attention \"text\" --layer L --head H", theme.accent),
                ],
            ]
            for (index, line) in lines.enumerated() {
                frame.draw(line, at: Point(x: body.x + 1, y: body.y + index), clip: body)
            }
            return
        }
        switch view {
        case .grid: renderGrid(analysis, into: &frame, area: body, theme: theme)
        case .head: renderHead(analysis, into: &frame, area: body, theme: theme)
        case .lines: renderLines(analysis, into: &frame, area: body, theme: theme)
        case .neuron: renderNeuron(analysis, into: &frame, area: body, theme: theme)
        case .table: renderTable(analysis, into: &frame, area: body, theme: theme, focused: context.focused)
        case .lens: renderLens(analysis, into: &frame, area: body, theme: theme)
        }
    }

    // MARK: - Model grid

    private func renderGrid(_ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme) {
        let labelWidth = 4
        let cellWidth = max(3, (area.width - labelWidth) / analysis.heads - 1)
        let cellRows = max(1, (area.height - 2) / analysis.layers - 1)
        for head in 0..<analysis.heads {
            let x = area.x + labelWidth + head * (cellWidth + 1)
            let label = TextWidth.fit("H\(head)", toColumns: cellWidth, alignment: .center)
            frame.draw(
                label, at: Point(x: x, y: area.y), style: head == self.head ? theme.selection : theme.dim, clip: area)
        }
        for layer in 0..<analysis.layers {
            let y = area.y + 1 + layer * (cellRows + 1)
            frame.draw(
                "L\(layer)", at: Point(x: area.x + 1, y: y), style: layer == self.layer ? theme.selection : theme.dim,
                clip: area)
            for head in 0..<analysis.heads {
                let x = area.x + labelWidth + head * (cellWidth + 1)
                let values = thumbnail(
                    analysis, layer: layer, head: head, columns: cellWidth,
                    rows: theme.isMonochrome ? cellRows : cellRows * 2)
                Heatmap(values: values, range: 0...1).render(into: &frame, origin: Point(x: x, y: y), theme: theme)
                if layer == self.layer && head == self.head {
                    for row in 0..<cellRows {
                        frame.draw("▕", at: Point(x: x - 1, y: y + row), style: theme.border(focused: true), clip: area)
                        frame.draw(
                            "▏", at: Point(x: x + cellWidth, y: y + row), style: theme.border(focused: true), clip: area
                        )
                    }
                }
            }
        }
        let statistics = analysis.statistics[layer * analysis.heads + head]
        let summary = String(
            format: "L%d H%d  entropy %.2f bits · [CLS] %.2f · [SEP] %.2f · prev %.2f · next %.2f   enter opens it",
            layer, head, statistics.entropy, statistics.classifierMass, statistics.separatorMass,
            statistics.previousToken, statistics.nextToken
        )
        frame.draw(summary, at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    /// A head's precomputed thumbnail max-pooled again to `rows × columns` cells.
    private func thumbnail(_ analysis: AttentionAnalysis, layer: Int, head: Int, columns: Int, rows: Int) -> [[Double]]
    {
        let source = analysis.thumbnails[layer * analysis.heads + head]
        let size = source.count
        return (0..<rows).map { row in
            let r0 = row * size / rows
            let r1 = max(r0 + 1, (row + 1) * size / rows)
            return (0..<columns).map { column in
                let c0 = column * size / columns
                let c1 = max(c0 + 1, (column + 1) * size / columns)
                var best: Float = 0
                for r in r0..<min(r1, size) {
                    for c in c0..<min(c1, size) { best = max(best, source[r][c]) }
                }
                return Double(best)
            }
        }
    }

    // MARK: - One head

    private func renderHead(_ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme) {
        let t = analysis.count
        let labels = Self.positionedLabels(analysis.tokens)
        let labelWidth = min(14, (labels.map { TextWidth.of($0) }.max() ?? 1) + 1)
        let sideWidth = area.width >= 90 ? 34 : 0
        let matrixWidth = area.width - labelWidth - sideWidth - 1
        // Cells grow with the terminal (up to 12 columns a key), at least 2 for long inputs.
        let cellWidth = max(2, min(12, matrixWidth / max(1, t)) / 2 * 2)
        let columns = max(1, min(t, matrixWidth / cellWidth))
        // Key tokens are written down the columns, up to 6 characters, when there is room.
        let labelRows = area.height >= 20 ? min(6, labels.map(\.count).max() ?? 1) : 0
        let rows = max(1, min(t, area.height - 3 - labelRows))
        // Window the matrix around the cursor so long inputs stay navigable.
        let firstKey = max(0, min(key - columns / 2, t - columns))
        let firstQuery = max(0, min(query - rows / 2, t - rows))
        let probability = analysis.weight(aggregate, layer: layer, head: head, query: query, key: key)
        // What is off screen, when the input is longer than the matrix has room for.
        var hidden: [String] = []
        if firstQuery > 0 { hidden.append("▲ \(firstQuery)") }
        if firstQuery + rows < t { hidden.append("▼ \(t - firstQuery - rows)") }
        if firstKey > 0 { hidden.append("◀ \(firstKey)") }
        if firstKey + columns < t { hidden.append("▶ \(t - firstKey - columns)") }
        let heading =
            "\(aggregateLabel(analysis)) · row = query, column = key · cursor \(labels[query]) → \(labels[key]) "
            + String(format: "%.3f", probability)
        let used = frame.draw(heading, at: Point(x: area.x + 1, y: area.y), style: theme.title, clip: area)
        if !hidden.isEmpty {
            frame.draw(
                "   more: " + hidden.joined(separator: " · ") + " (move the cursor)",
                at: Point(x: area.x + 1 + used, y: area.y), style: theme.status(.info), clip: area)
        }
        let top = area.y + 2 + labelRows
        let left = area.x + labelWidth
        // Column marks every fifth key.
        for column in 0..<columns where (firstKey + column) % 5 == 0 {
            frame.draw(
                String(firstKey + column), at: Point(x: left + column * cellWidth, y: area.y + 1), style: theme.dim,
                clip: area)
        }
        for column in 0..<columns where labelRows > 0 {
            let k = firstKey + column
            let inSecond = analysis.secondStart.map { k >= $0 } ?? false
            let style = k == key ? theme.selection : (inSecond ? theme.accent : theme.dim)
            for (row, character) in labels[k].prefix(labelRows).enumerated() {
                frame.draw(
                    String(character), at: Point(x: left + column * cellWidth, y: area.y + 2 + row), style: style,
                    clip: area)
            }
        }
        if let start = analysis.secondStart, start >= firstKey, start < firstKey + columns {
            frame.draw(
                "▏B", at: Point(x: left + (start - firstKey) * cellWidth, y: area.y + 1), style: theme.accent,
                clip: area)
        }
        let shades = [" ", "░", "▒", "▓", "█"]
        for row in 0..<rows {
            let q = firstQuery + row
            let y = top + row
            // Rows of a pair's second sentence are set apart in the accent colour.
            let inSecond = analysis.secondStart.map { q >= $0 } ?? false
            frame.draw(
                TextWidth.fit(labels[q], toColumns: labelWidth - 1), at: Point(x: area.x, y: y),
                style: q == query ? theme.selection : (inSecond ? theme.accent : theme.text), clip: area)
            for column in 0..<columns {
                let k = firstKey + column
                let p = Double(analysis.weight(aggregate, layer: layer, head: head, query: q, key: k))
                let x = left + column * cellWidth
                guard x + cellWidth <= area.maxX else { break }
                if q == query && k == key {
                    let cursorStyle =
                        theme.isMonochrome
                        ? Style(attributes: .reverse)
                        : Style(foreground: RGB(255, 255, 255), background: theme.heatColor(p))
                    frame.draw(
                        "[" + String(repeating: " ", count: cellWidth - 2) + "]", at: Point(x: x, y: y),
                        style: cursorStyle, clip: area)
                    continue
                }
                // Matrix cells are fixed glyphs: put them straight into the frame (thousands per
                // frame at 256 tokens), skipping the text path's sanitising and width work.
                let glyph = theme.isMonochrome ? shades[min(4, Int(p * 4.999))] : "█"
                let style = theme.isMonochrome ? Style.plain : Style(foreground: theme.heatColor(p))
                for offset in 0..<cellWidth { frame.put(glyph, x: x + offset, y: y, style: style) }
            }
        }
        renderLegend(into: &frame, at: Point(x: area.x + 1, y: min(area.maxY - 1, top + rows)), theme: theme)
        if sideWidth > 0 {
            let side = Rect(x: area.maxX - sideWidth, y: top, width: sideWidth, height: area.maxY - top)
            renderFocus(analysis, labels: labels, into: &frame, area: side, theme: theme)
        }
    }

    private func renderLegend(into frame: inout Frame, at point: Point, theme: Theme) {
        var x = frame.draw("0 ", at: point, style: theme.dim)
        for step in 0...15 {
            let p = Double(step) / 15
            let style = theme.isMonochrome ? Style.plain : Style(foreground: theme.heatColor(p))
            let glyph = theme.isMonochrome ? ["·", "░", "▒", "▓", "█"][min(4, Int(p * 4.999))] : "█"
            x += frame.draw(glyph, at: Point(x: point.x + x, y: point.y), style: style)
        }
        frame.draw(" 1  (probability)", at: Point(x: point.x + x, y: point.y), style: theme.dim)
    }

    /// What the cursor's query attends to, and what attends to its key, as bars.
    private func renderFocus(
        _ analysis: AttentionAnalysis, labels: [String], into frame: inout Frame, area: Rect, theme: Theme
    ) {
        let t = analysis.count
        let outgoing = (0..<t).map { ($0, analysis.weight(aggregate, layer: layer, head: head, query: query, key: $0)) }
            .sorted { $0.1 > $1.1 }
        let incoming = (0..<t).map { ($0, analysis.weight(aggregate, layer: layer, head: head, query: $0, key: key)) }
            .sorted { $0.1 > $1.1 }
        var y = area.y
        func section(_ title: String, _ entries: [(Int, Float)]) {
            frame.draw(title, at: Point(x: area.x, y: y), style: theme.title, clip: area)
            y += 1
            for (index, p) in entries.prefix(max(1, (area.height - 3) / 2 - 1)) where y < area.maxY {
                frame.draw(
                    TextWidth.fit(labels[index], toColumns: 13), at: Point(x: area.x, y: y), style: theme.text,
                    clip: area)
                Gauge(fraction: Double(p), label: String(format: "%.2f", p)).render(
                    into: &frame, area: Rect(x: area.x + 14, y: y, width: area.width - 14, height: 1), theme: theme)
                y += 1
            }
            y += 1
        }
        section("\(labels[query]) attends to", outgoing)
        section("attends to \(labels[key])", incoming)
    }

    // MARK: - Head lines (BertViz's head view)

    /// BertViz's head view: the tokens twice, queries on the left and keys on the right, a line
    /// from each query to each key it attends to, coloured by the weight, so the head's pattern
    /// reads at once (BertViz draws every line with its weight as opacity). Every query's lines of
    /// weight ≥ 0.1 are drawn in the text colour faded toward the background by their weight (an
    /// opacity), weakest first; the
    /// cursor's query (↑/↓) has its lines of weight ≥ 0.05 at full colour over them, and its weights.
    private func renderLines(_ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme) {
        let t = analysis.count
        let labels = Self.positionedLabels(analysis.tokens)
        let labelWidth = min(14, (labels.map { TextWidth.of($0) }.max() ?? 1) + 1)
        let top = area.y + 2
        let height = max(1, area.height - 4)
        // One row a token, spread over the height when they are few; a window around the cursor
        // when they are many.
        let shown = min(t, height)
        let first = max(0, min(query - shown / 2, t - shown))
        let spacing = max(1, min(3, height / max(1, shown)))
        let leftX = area.x + 1
        let rightX = area.maxX - labelWidth - 7
        let plot = Rect(
            x: leftX + labelWidth + 1, y: top, width: max(4, rightX - leftX - labelWidth - 2), height: shown * spacing)
        let overlaid = aggregate == .layerMean && !theme.isMonochrome
        var heading =
            overlaid
            ? "L\(layer), \(analysis.heads) heads overlaid · ↑/↓ token, a combines differently"
            : "\(aggregateLabel(analysis)) · query → key lines, ←/→ head, ↑/↓ token, a combines heads"
        if first > 0 || first + shown < t { heading += " · showing \(first)…\(first + shown - 1) of \(t)" }
        frame.draw(heading, at: Point(x: area.x + 1, y: area.y), style: theme.title, clip: area)
        var canvas = BrailleCanvas(columns: plot.width, rows: plot.height)
        func dotY(_ token: Int) -> Int { (token - first) * spacing * 4 + 1 }
        var others: [(query: Int, key: Int, weight: Float)] = []
        for q in first..<(first + shown) where q != query {
            for k in first..<(first + shown) {
                let p = analysis.weight(aggregate, layer: layer, head: head, query: q, key: k)
                // Heads overlaid in colour: the other queries' strong lines only, dim, under them.
                if p >= (overlaid ? 0.3 : 0.1) { others.append((q, k, p)) }
            }
        }
        // Weakest first, so a strong line is not hidden under a weak one where they cross.
        let background = theme.backgroundOrDefault
        let ink = theme.text.foreground ?? (theme.hasLightBackground ? RGB(0, 0, 0) : RGB(255, 255, 255))
        for line in others.sorted(by: { $0.weight < $1.weight }) {
            let style =
                overlaid
                ? theme.dim
                : theme.isMonochrome
                    ? (line.weight >= 0.5 ? Style(attributes: .bold) : theme.dim)
                    : Style(foreground: RGB.mix(background, ink, 0.2 + 0.8 * Double(line.weight)))
            canvas.line(
                from: Point(x: 0, y: dotY(line.query)), to: Point(x: canvas.dotWidth - 1, y: dotY(line.key)),
                style: style)
        }
        // BertViz's overlaid heads: the cursor's lines in every head of the layer, a colour each.
        if overlaid && query >= first && query < first + shown {
            for h in 0..<analysis.heads {
                for k in first..<(first + shown) {
                    let p = analysis.probability(layer: layer, head: h, query: query, key: k)
                    guard p >= 0.1 else { continue }
                    canvas.line(
                        from: Point(x: 0, y: dotY(query)), to: Point(x: canvas.dotWidth - 1, y: dotY(k)),
                        style: Style(foreground: Self.headColor(h, of: analysis.heads, theme: theme)))
                }
            }
        }
        // The cursor's lines last, so they are drawn over the others, strongest last.
        let mine = (overlaid ? first..<first : first..<(first + shown)).map {
            ($0, analysis.weight(aggregate, layer: layer, head: head, query: query, key: $0))
        }
        .filter { $0.1 >= 0.05 }.sorted { $0.1 < $1.1 }
        for (k, p) in mine where query >= first && query < first + shown {
            let style =
                theme.isMonochrome
                ? Style(attributes: p >= 0.5 ? .bold : []) : Style(foreground: theme.heatMarkColor(Double(p)))
            canvas.line(from: Point(x: 0, y: dotY(query)), to: Point(x: canvas.dotWidth - 1, y: dotY(k)), style: style)
        }
        canvas.render(into: &frame, origin: Point(x: plot.x, y: plot.y))
        for token in first..<(first + shown) {
            let y = top + (token - first) * spacing
            let p = analysis.weight(aggregate, layer: layer, head: head, query: query, key: token)
            frame.draw(
                TextWidth.fit(labels[token], toColumns: labelWidth, alignment: .trailing), at: Point(x: leftX, y: y),
                style: token == query ? theme.selection : theme.text, clip: area)
            frame.draw(
                labels[token], at: Point(x: rightX, y: y), style: Self.keyLabelStyle(p, theme: theme), clip: area)
            if p >= 0.01 {
                // The weight's colour on a swatch beside its number: the label itself stays in a
                // text role (the ramp's low end, dark purple, was unreadable on a dark theme).
                let x = rightX + TextWidth.of(labels[token]) + 1
                frame.draw(
                    "█", at: Point(x: x, y: y),
                    style: theme.isMonochrome ? theme.dim : Style(foreground: theme.heatColor(Double(p))), clip: area)
                frame.draw(String(format: "%.2f", p), at: Point(x: x + 1, y: y), style: theme.dim, clip: area)
            }
        }
        if overlaid {
            var x = frame.draw("heads ", at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
            for h in 0..<analysis.heads {
                x += frame.draw(
                    "H\(h) ", at: Point(x: area.x + 1 + x, y: area.maxY - 1),
                    style: Style(foreground: Self.headColor(h, of: analysis.heads, theme: theme)), clip: area)
            }
            frame.draw(
                "(lines of weight ≥ 0.10; the numbers are the layer mean)",
                at: Point(x: area.x + 1 + x, y: area.maxY - 1),
                style: theme.dim, clip: area)
        } else {
            renderLegend(into: &frame, at: Point(x: area.x + 1, y: area.maxY - 1), theme: theme)
        }
    }

    /// The heading's name for what is drawn: a head, or how heads are combined.
    func aggregateLabel(_ analysis: AttentionAnalysis) -> String {
        aggregate.label(layer: layer, head: head, heads: analysis.heads, layers: analysis.layers)
    }

    /// Head `h`'s colour among `count` overlaid heads: hues spread around the wheel, at the
    /// lightness of the theme's text so they read on its background.
    /// A key's label in the head-lines view: in the text role (bold from 0.3) when the cursor's
    /// query attends to it, dim when it hardly does; never in the heat ramp's colours, whose low
    /// end has no contrast on a dark background.
    package static func keyLabelStyle(_ p: Float, theme: Theme) -> Style {
        guard p >= 0.02 else { return theme.dim }
        return p >= 0.3 ? theme.text.adding(.bold) : theme.text
    }

    static func headColor(_ h: Int, of count: Int, theme: Theme) -> RGB {
        let hue = Double(h) / Double(max(1, count)) * 6
        let sector = Int(hue) % 6
        let f = hue - Double(Int(hue))
        let (r, g, b): (Double, Double, Double) =
            switch sector {
            case 0: (1, f, 0)
            case 1: (1 - f, 1, 0)
            case 2: (0, 1, f)
            case 3: (0, 1 - f, 1)
            case 4: (f, 0, 1)
            default: (1, 0, 1 - f)
            }
        let pure = RGB(UInt8(r * 255), UInt8(g * 255), UInt8(b * 255))
        // Light backgrounds get darker hues; dark ones keep them bright.
        return theme.hasLightBackground ? RGB.mix(pure, RGB(0, 0, 0), 0.35) : RGB.mix(pure, RGB(255, 255, 255), 0.15)
    }

    // MARK: - Neuron view (BertViz's q, k and q·k)

    /// BertViz's neuron view for one head: the cursor query's q vector, the cursor key's k
    /// vector and their elementwise product, a cell per dimension (red positive, blue negative),
    /// then every key's score q·k/√d and the softmax of the scores, which is the head's attention.
    private func renderNeuron(_ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme) {
        guard analysis.hasQueryKey else {
            frame.draw(
                "This analysis has no query and key vectors; press enter to run MiniLM again.",
                at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        let labels = Self.positionedLabels(analysis.tokens)
        let d = analysis.headSize
        let q = Array(analysis.queryVector(layer: layer, head: head, token: query))
        let k = Array(analysis.keyVector(layer: layer, head: head, token: key))
        let product = zip(q, k).map { $0 * $1 }
        let score = analysis.score(layer: layer, head: head, query: query, key: key)
        frame.draw(
            "L\(layer) H\(head) · \(labels[query]) → \(labels[key]) · q·k/√\(d) = "
                + String(format: "%.3f", score) + " · attention "
                + String(format: "%.3f", analysis.probability(layer: layer, head: head, query: query, key: key))
                + " · ↑/↓ query, ←/→ key, [/] head",
            at: Point(x: area.x + 1, y: area.y), style: theme.title, clip: area)
        let labelWidth = 14
        let cell = max(1, min(3, (area.width - labelWidth - 2) / max(1, d)))
        let scale = max(q.map(abs).max() ?? 1, k.map(abs).max() ?? 1, 1e-6)
        let productScale = max(product.map(abs).max() ?? 1, 1e-6)
        let rows: [(String, [Float], Float)] = [
            ("q  " + labels[query], q, scale), ("k  " + labels[key], k, scale), ("q×k", product, productScale),
        ]
        for (index, row) in rows.enumerated() {
            let y = area.y + 2 + index
            frame.draw(
                TextWidth.fit(row.0, toColumns: labelWidth - 1), at: Point(x: area.x + 1, y: y),
                style: index == 2 ? theme.accent : theme.text, clip: area)
            for (dimension, value) in row.1.enumerated() {
                let x = area.x + labelWidth + 1 + dimension * cell
                guard x + cell <= area.maxX else { break }
                let fraction = Double(value / row.2)
                let glyph = theme.isMonochrome ? (fraction > 0.25 ? "+" : fraction < -0.25 ? "-" : "·") : "█"
                let style =
                    theme.isMonochrome ? Style.plain : Style(foreground: Self.signedColor(fraction, theme: theme))
                for offset in 0..<cell { frame.put(glyph, x: x + offset, y: y, style: style) }
            }
        }
        let positives = product.filter { $0 > 0 }.reduce(0, +)
        let negatives = product.filter { $0 < 0 }.reduce(0, +)
        frame.draw(
            "q·k = " + String(format: "%.2f", positives + negatives) + " = " + String(format: "%.2f", positives)
                + " from dimensions that agree " + String(format: "%.2f", negatives) + " from ones that disagree · "
                + "cells scaled to max |value| " + String(format: "%.2f", scale),
            at: Point(x: area.x + 1, y: area.y + 5), style: theme.dim, clip: area)
        // Every key for this query: its score and the softmax, with the cursor's key marked.
        let top = area.y + 7
        let shown = max(1, area.maxY - top)
        let first = max(0, min(key - shown / 2, analysis.count - shown))
        frame.draw(
            TextWidth.fit("key", toColumns: labelWidth - 1) + "   q·k/√d  softmax",
            at: Point(x: area.x + 1, y: top - 1),
            style: theme.dim, clip: area)
        for token in first..<min(analysis.count, first + shown) {
            let y = top + token - first
            let p = analysis.probability(layer: layer, head: head, query: query, key: token)
            let s = analysis.score(layer: layer, head: head, query: query, key: token)
            frame.draw(
                TextWidth.fit(labels[token], toColumns: labelWidth - 1), at: Point(x: area.x + 1, y: y),
                style: token == key ? theme.selection : theme.text, clip: area)
            frame.draw(
                String(format: "%9.3f", s), at: Point(x: area.x + labelWidth, y: y),
                style: s >= 0 ? theme.text : theme.dim, clip: area)
            Gauge(fraction: Double(p), label: String(format: "%.3f", p)).render(
                into: &frame,
                area: Rect(
                    x: area.x + labelWidth + 11, y: y, width: min(40, area.maxX - area.x - labelWidth - 12), height: 1),
                theme: theme)
        }
    }

    /// A signed value in −1…1 as a colour: red for positive, blue for negative, in five steps
    /// each that fade towards the background near 0. The steps are colours of xterm's 6×6×6
    /// cube, so a 256-colour terminal shows exactly these and not a neighbour of another hue.
    static func signedColor(_ fraction: Double, theme: Theme) -> RGB {
        let light = theme.hasLightBackground
        let clamped = min(1, max(-1, fraction.isFinite ? fraction : 0))
        let step = min(4, Int(abs(clamped) * 5))
        let levels: [UInt8] = light ? [215, 175, 135, 95, 0] : [95, 135, 175, 215, 255]
        let level = levels[step]
        if light {
            return clamped >= 0 ? RGB(255, level, level) : RGB(level, level, 255)
        }
        return clamped >= 0 ? RGB(level, 0, 0) : RGB(0, step == 4 ? 95 : 0, level)
    }

    // MARK: - Head table and lens

    private func renderTable(
        _ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme, focused: Bool
    ) {
        let rows = sortedStatistics(analysis).map { s in
            ["L\(s.layer) H\(s.head)"]
                + [s.entropy, s.classifierMass, s.separatorMass, s.punctuationMass, s.previousToken, s.nextToken].map {
                    String(format: "%.3f", $0)
                }
        }
        let columns =
            [TableColumn("head", width: .length(8))]
            + ["entropy", "[CLS]", "[SEP]", "punct", "prev", "next"].map {
                TableColumn($0, width: .fill(1), alignment: .trailing)
            }
        var state = tableState
        TableView(columns: columns, rows: rows, sort: sort, focused: focused)
            .render(
                into: &frame, area: Rect(x: area.x, y: area.y, width: area.width, height: area.height - 1),
                state: &state, theme: theme)
        frame.draw(
            "s sort · S reverse · enter open · entropy in bits; the rest are mean probabilities",
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    private func renderLens(_ analysis: AttentionAnalysis, into frame: inout Frame, area: Rect, theme: Theme) {
        frame.draw(
            "Cosine of each layer's mean-pooled hidden states to the final sentence embedding",
            at: Point(x: area.x + 1, y: area.y), style: theme.title, clip: area)
        for (layer, cosine) in analysis.lens.enumerated() {
            let y = area.y + 2 + layer
            frame.draw("layer \(layer)", at: Point(x: area.x + 1, y: y), style: theme.text, clip: area)
            Gauge(fraction: max(0, cosine), label: String(format: "%.3f", cosine)).render(
                into: &frame, area: Rect(x: area.x + 10, y: y, width: min(60, area.width - 12), height: 1), theme: theme
            )
        }
    }

    /// Token labels for the axes, up to 10 characters; a token that occurs more than once gets
    /// its position (`the·3`), so "attends to the" says which one.
    package static func positionedLabels(_ tokens: [String]) -> [String] {
        var counts: [String: Int] = [:]
        for token in tokens { counts[token, default: 0] += 1 }
        return tokens.enumerated().map { index, token in
            let label = UntrustedText.sanitized(String(token.prefix(10)))
            return (counts[token] ?? 0) > 1 ? label + "·\(index)" : label
        }
    }
}
