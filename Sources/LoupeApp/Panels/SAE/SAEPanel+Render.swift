import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension SAEPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let position = listings.flatMap { all in all.firstIndex { $0.id == selectedModel }.map { ($0, all.count) } }
        let trailing = position.map { "SAE \($0.0 + 1) of \($0.1) · \(view.rawValue)" } ?? ""
        let inner = Block(title: "SAE · \(sourceName) features", trailingTitle: trailing, focused: context.focused)
            .render(
                into: &frame, area: area, theme: theme)
        guard inner.height >= 6, inner.width >= 30 else { return }
        guard listings != nil else {
            frame.draw("Reading the workspace's SAEs…", at: Point(x: inner.x + 1, y: inner.y), style: theme.dim)
            return
        }
        guard let listing else {
            if let error {
                frame.draw(
                    "✗ " + error, at: Point(x: inner.x + 1, y: inner.y), style: theme.status(.error), clip: inner)
            }
            renderEmpty(into: &frame, area: inner.inset(dx: 0, dy: error == nil ? 0 : 1), theme: theme)
            return
        }
        renderHeader(listing, into: &frame, area: inner, theme: theme)
        var body = Rect(x: inner.x, y: inner.y + 2, width: inner.width, height: inner.height - 2)
        if let error {
            frame.draw(
                "✗ " + error, at: Point(x: body.x + 1, y: body.y), style: theme.status(.error), clip: body)
            body = Rect(x: body.x, y: body.y + 1, width: body.width, height: body.height - 1)
        }
        switch view {
        case .features: renderFeatures(listing, into: &frame, area: body, theme: theme, focused: context.focused)
        case .card: renderCard(into: &frame, area: body, theme: theme)
        case .training: renderTraining(listing, into: &frame, area: body, theme: theme)
        }
    }

    private func renderEmpty(into frame: inout Frame, area: Rect, theme: Theme) {
        let lines: [[Span]] = [
            [Span("No SAE in this workspace yet. From the : line or a shell:", theme.dim)],
            [Span("  loupe sae collect --layer 3 --tokens 100000", theme.accent)],
            [
                Span("  loupe sae train --layer 3 --width 3072 --k 32", theme.accent),
                Span("   (t opens the : line with it)", theme.dim),
            ],
            [Span("Training curves appear here while it trains; then its features.", theme.dim)],
        ]
        for (index, line) in lines.enumerated() {
            frame.draw(line, at: Point(x: area.x + 1, y: area.y + index), clip: area)
        }
    }

    /// Two lines: what the SAE is, and how good it is.
    private func renderHeader(_ listing: SAEListing, into frame: inout Frame, area: Rect, theme: Theme) {
        let reached = max(listing.step, live[listing.id]?.last?.step ?? 0)
        let progress = listing.finished ? "" : " · step \(reached)/\(listing.steps)"
        let what =
            "SAE \(listing.id) · \(readsLanguageModel ? "SmolLM2 " : "")layer \(listing.layer) · \(listing.kind) · \(listing.width) latents · "
            + "\(Self.grouped(listing.tokens)) tokens\(progress)"
        frame.draw(what, at: Point(x: area.x + 1, y: area.y), style: theme.title, clip: area)
        let quality =
            listing.metrics.map { Self.quality($0, fitting: area.width - 2, theme: theme) }
            ?? [Span("training has not finished: no metrics yet (v shows its curves)", theme.dim)]
        frame.draw(quality, at: Point(x: area.x + 1, y: area.y + 1), clip: area)
    }

    /// The metrics line, as much of it as `columns` hold: every figure where the panel is wide;
    /// narrower, cosine and the dense share go, then the zero-ablated loss, then the losses, so
    /// the headline figures (L0, FVU, dead, and a SmolLM2 SAE's loss recovered) stay whole.
    static func quality(_ m: SAEMetrics, fitting columns: Int, theme: Theme) -> [Span] {
        func figure(_ label: String, _ value: String, _ style: Style) -> [Span] {
            [Span(label, theme.dim), Span(value, style)]
        }
        func line(cosineAndDense: Bool, zeroed: Bool, losses: Bool) -> [Span] {
            var spans = figure("L0 ", String(format: "%.1f", m.l0), theme.text)
            spans += figure(" · FVU ", String(format: "%.3f", m.fvu), theme.text)
            if cosineAndDense { spans += figure(" · cosine ", String(format: "%.3f", m.cosine), theme.text) }
            spans += figure(" · dead ", String(format: "%.1f%%", m.deadFraction * 100), theme.text)
            if cosineAndDense {
                spans += figure(" · dense ", String(format: "%.1f%%", m.denseFraction * 100), theme.text)
            }
            if let fidelity = m.embeddingFidelity {
                spans += figure(" · fidelity ", String(format: "%.4f", fidelity), theme.accent)
            }
            if let loss = m.languageModelFidelity {
                if losses {
                    spans += figure(
                        " · loss ", String(format: "%.3f→%.3f", loss.cleanLoss, loss.splicedLoss), theme.text)
                    if zeroed { spans.append(Span(String(format: " (zeroed %.2f)", loss.zeroAblatedLoss), theme.dim)) }
                }
                spans += figure(" · recovered ", String(format: "%.1f%%", loss.lossRecovered * 100), theme.accent)
            }
            return spans
        }
        let candidates = [
            line(cosineAndDense: true, zeroed: true, losses: true),
            line(cosineAndDense: false, zeroed: true, losses: true),
            line(cosineAndDense: false, zeroed: false, losses: true),
        ]
        return candidates.first { $0.reduce(0) { $0 + TextWidth.of($1.text) } <= columns }
            ?? line(cosineAndDense: false, zeroed: false, losses: false)
    }

    // MARK: - Features

    private func renderFeatures(
        _ listing: SAEListing, into frame: inout Frame, area: Rect, theme: Theme, focused: Bool
    ) {
        guard let features else {
            let training = live[listing.id]?.last.map { $0.step < listing.steps } ?? false
            let text =
                training
                ? "SAE \(listing.id) is training: v shows its curves as they grow; its features once it has finished."
                : loadingFeatures != nil
                    ? "Reading SAE \(listing.id)'s feature index (built once from \(Self.grouped(listing.tokens)) tokens; "
                        + "progress in the status bar)…"
                    : listing.step == 0 ? "SAE \(listing.id) has not trained a step yet: v shows its curves." : ""
            frame.draw(text, at: Point(x: area.x + 1, y: area.y), style: theme.status(.info), clip: area)
            return
        }
        let sideWidth = area.width >= 110 ? 40 : 0
        let table = Rect(x: area.x, y: area.y, width: area.width - sideWidth, height: area.height - 1)
        let sorted = sortedFeatures
        let labelled = features.filter { $0.label != nil }.count
        let rows = sorted.map { f in
            [
                String(f.feature), String(format: "%.5f", f.density), String(format: "%.3f", f.maxActivation),
                UntrustedText.sanitized((f.topTokens ?? []).joined(separator: " · ")),
                UntrustedText.sanitized(f.label ?? ""),
            ]
        }
        let columns = [
            TableColumn("feature", width: .length(8), alignment: .trailing),
            TableColumn("density", width: .length(9), alignment: .trailing),
            TableColumn("max act", width: .length(10), alignment: .trailing),
            TableColumn("fires most on", width: .fill(1)),
            TableColumn("label", width: .fill(1)),
        ]
        let sortColumn = [Order.feature: 0, .density: 1, .max: 2, .label: 4][order] ?? 1
        var state = featureList
        TableView(
            columns: columns, rows: rows, sort: TableSort(column: sortColumn, ascending: ascending), focused: focused
        )
        .render(into: &frame, area: table, state: &state, theme: theme)
        if sideWidth > 0 {
            let side = Rect(x: area.maxX - sideWidth + 1, y: area.y, width: sideWidth - 2, height: area.height - 1)
            renderDensityHistogram(listing, into: &frame, area: side, theme: theme)
        }
        let hidden = features.count - sorted.count
        let hint =
            "\(sorted.count) of \(features.count) features"
            + (hidden > 0 ? " (\(hidden) dense or dead hidden: H)" : "")
            + " · \(labelled) labelled · density: the share of tokens it fires on"
        frame.draw(hint, at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    /// SAELens's feature density histogram: how many latents fire at each log10 frequency.
    private func renderDensityHistogram(_ listing: SAEListing, into frame: inout Frame, area: Rect, theme: Theme) {
        guard let histogram = listing.metrics?.densityHistogram, !histogram.isEmpty else { return }
        frame.draw("log10 firing frequency (latents)", at: Point(x: area.x, y: area.y), style: theme.title, clip: area)
        let most = max(1, histogram.max() ?? 1)
        let barWidth = max(4, area.width - 12)
        for (bin, count) in histogram.enumerated() where area.y + 1 + bin < area.maxY {
            let label = String(format: "%5.1f ", -7.0 + Double(bin) * 0.5)
            let bar = String(repeating: "█", count: count == 0 ? 0 : max(1, count * barWidth / most))
            frame.draw(
                [Span(label, theme.dim), Span(bar, theme.accent), Span(" \(count)", theme.dim)],
                at: Point(x: area.x, y: area.y + 1 + bin), clip: area)
        }
    }

    // MARK: - Card

    private func renderCard(into frame: inout Frame, area: Rect, theme: Theme) {
        // The test text box keeps the bottom three rows: the input, its shading, a hint.
        let testArea = Rect(x: area.x, y: area.maxY - 3, width: area.width, height: 3)
        let top = Rect(x: area.x, y: area.y, width: area.width, height: area.height - 4)
        defer { renderTest(into: &frame, area: testArea, theme: theme) }
        guard let card, loadingCard == nil || loadingCard == card.feature else {
            let what = loadingCard.map { "Reading feature \($0)'s contexts and neighbours…" } ?? ""
            frame.draw(what, at: Point(x: area.x + 1, y: area.y), style: theme.status(.info), clip: area)
            return
        }
        var title: [Span] = [Span("Feature \(card.feature)", theme.title)]
        if let label = card.label {
            title += [Span(" · ", theme.dim), Span(UntrustedText.sanitized(label), theme.accent)]
        }
        let fired = Int((card.density * Double(listing?.tokens ?? 0)).rounded())
        title += [
            Span(
                String(format: " · density %.5f (", card.density) + Self.grouped(fired)
                    + String(format: " tokens) · max %.3f", card.maxActivation),
                theme.dim)
        ]
        frame.draw(title, at: Point(x: top.x + 1, y: top.y), clip: top)
        let sideWidth = top.width >= 110 ? 44 : 0
        let contexts = Rect(x: top.x + 1, y: top.y + 1, width: top.width - sideWidth - 3, height: top.height - 1)
        let summaryRows = sideWidth > 0 ? 0 : 3
        renderContexts(
            card, into: &frame,
            area: Rect(x: contexts.x, y: contexts.y, width: contexts.width, height: contexts.height - summaryRows),
            theme: theme)
        if sideWidth > 0 {
            let side = Rect(x: top.maxX - sideWidth, y: top.y + 1, width: sideWidth - 1, height: top.height - 1)
            renderCardSide(card, into: &frame, area: side, theme: theme)
        } else {
            renderCardSummary(
                card, into: &frame,
                area: Rect(x: contexts.x, y: contexts.maxY - summaryRows, width: contexts.width, height: summaryRows),
                theme: theme)
        }
    }

    /// The contexts of each activation band, one per row, tokens shaded by the feature's activation.
    private func renderContexts(_ card: SAEFeatureIndex.Card, into frame: inout Frame, area: Rect, theme: Theme) {
        var y = area.y
        for group in card.groups where y < area.maxY {
            frame.draw(group.name, at: Point(x: area.x, y: y), style: theme.accent, clip: area)
            y += 1
            for context in group.contexts where y < area.maxY {
                let value = String(format: "%6.2f  ", context.activation)
                let x = area.x + frame.draw(value, at: Point(x: area.x, y: y), style: theme.dim, clip: area)
                let row = Rect(x: x, y: y, width: area.maxX - x, height: 1)
                renderShaded(
                    tokens: context.tokens, activations: context.activations, center: context.center,
                    maximum: card.maxActivation, into: &frame, area: row, theme: theme)
                y += 1
            }
        }
        if card.groups.isEmpty {
            frame.draw(
                "This feature never fires on the activation set.", at: Point(x: area.x, y: y), style: theme.dim,
                clip: area)
        }
    }

    /// Histogram, nearest tokens and nearest features in a column beside the contexts.
    private func renderCardSide(_ card: SAEFeatureIndex.Card, into frame: inout Frame, area: Rect, theme: Theme) {
        var y = area.y
        func line(_ spans: [Span]) {
            guard y < area.maxY else { return }
            frame.draw(spans, at: Point(x: area.x, y: y), clip: area)
            y += 1
        }
        line([Span("activations (10 bins up to the max)", theme.title)])
        let most = max(1, card.histogram.max() ?? 1)
        for (bin, count) in card.histogram.enumerated() {
            let low = Float(bin) / 10 * card.maxActivation
            let bar = String(repeating: "█", count: count == 0 ? 0 : max(1, count * (area.width - 14) / most))
            line([
                Span(String(format: "%6.2f ", low), theme.dim), Span(bar, theme.accent), Span(" \(count)", theme.dim),
            ])
        }
        y += 1
        if let promotes = card.promotes {
            line([Span("promotes · logit", theme.title)])
            line([Span("through SmolLM2's final norm and head", theme.dim)])
            for token in promotes.prefix(5) {
                line([
                    Span(
                        TextWidth.fit(UntrustedText.sanitized(token.name).debugDescription, toColumns: 16), theme.text),
                    Span(String(format: "%.2f", token.cosine), theme.dim),
                ])
            }
            let lowered = (card.suppresses ?? []).prefix(3).map { UntrustedText.sanitized($0.name).debugDescription }
            line([Span("suppresses ", theme.dim), Span(lowered.joined(separator: " "), theme.text)])
            if readsLanguageModel { line([Span("s steers a generation with it", theme.dim)]) }
        } else {
            line([Span("nearest tokens · cosine", theme.title)])
            line([Span("via MiniLM's tied word-embedding matrix", theme.dim)])
            for neighbor in card.vocabulary.prefix(5) {
                line([
                    Span(TextWidth.fit(UntrustedText.sanitized(neighbor.name), toColumns: 16), theme.text),
                    Span(String(format: "%.2f", neighbor.cosine), theme.dim),
                ])
            }
            if card.vocabulary.isEmpty { line([Span("(\(sourceName)'s weights are not available)", theme.dim)]) }
        }
        y += 1
        line([Span("nearest features · decoder cosine", theme.title)])
        for neighbor in card.neighbors {
            line([
                Span(TextWidth.fit(UntrustedText.sanitized(neighbor.name), toColumns: 30), theme.text),
                Span(String(format: "%.2f", neighbor.cosine), theme.dim),
            ])
        }
    }

    /// The side column in three lines, for narrow terminals.
    private func renderCardSummary(_ card: SAEFeatureIndex.Card, into frame: inout Frame, area: Rect, theme: Theme) {
        let histogram = Sparkline(values: card.histogram.map(Double.init)).glyphs(width: 10)
        let tokens = (card.promotes ?? card.vocabulary).prefix(6).map {
            "\(card.promotes == nil ? UntrustedText.sanitized($0.name) : UntrustedText.sanitized($0.name).debugDescription) "
                + String(format: "%.2f", $0.cosine)
        }
        let neighbors = card.neighbors.prefix(4).map {
            "\($0.name.replacingOccurrences(of: "feature ", with: "#")) \(String(format: "%.2f", $0.cosine))"
        }
        let lines: [[Span]] = [
            [
                Span("histogram ", theme.dim), Span(histogram, theme.accent),
                Span(String(format: " 0 → %.2f", card.maxActivation), theme.dim),
            ],
            [
                Span(
                    card.promotes == nil ? "tokens (MiniLM's tied word embeddings) " : "promotes (s steers) ", theme.dim
                ),
                Span(tokens.joined(separator: ", "), theme.text),
            ],
            [Span("features (decoder cosine) ", theme.dim), Span(neighbors.joined(separator: ", "), theme.text)],
        ]
        for (index, line) in lines.enumerated() where index < area.height {
            frame.draw(line, at: Point(x: area.x, y: area.y + index), clip: area)
        }
    }

    /// The test text: its input line, the text shaded by the open feature, and what fires most on it.
    private func renderTest(into frame: inout Frame, area: Rect, theme: Theme) {
        let active = editing == .test
        if editing == .label {
            labelInput.render(
                into: &frame, area: Rect(x: area.x + 1, y: area.y, width: area.width - 2, height: 1),
                prompt: [Span("label › ", theme.key)], style: theme.input, showCursor: true)
        } else {
            testInput.render(
                into: &frame, area: Rect(x: area.x + 1, y: area.y, width: area.width - 2, height: 1),
                prompt: [Span(active ? "test text › " : "test text   ", active ? theme.key : theme.dim)],
                style: active ? theme.input : theme.text, showCursor: active)
        }
        let shadeRow = Rect(x: area.x + 1, y: area.y + 1, width: area.width - 2, height: 1)
        if let loadingTest {
            frame.draw(
                "Running \(sourceName) + the SAE on “\(loadingTest)”…", at: Point(x: shadeRow.x, y: shadeRow.y),
                style: theme.status(.info), clip: shadeRow)
        } else if let test, let feature = card?.feature {
            let values = test.activations(of: feature)
            let maximum = max(card?.maxActivation ?? 0, values.max() ?? 0)
            renderShaded(
                tokens: test.tokens, activations: values, center: values.indices.max { values[$0] < values[$1] } ?? 0,
                maximum: maximum, into: &frame, area: shadeRow, theme: theme)
            let strongest = Self.strongest(test, excluding: feature)
            let fires = values.contains { $0 > 0 }
            let note =
                (fires
                    ? String(format: "feature %d peaks at %.2f here", feature, values.max() ?? 0)
                    : "feature \(feature) does not fire here") + " · strongest here: " + strongest
            frame.draw(note, at: Point(x: area.x + 1, y: area.y + 2), style: theme.dim, clip: area)
        } else {
            frame.draw(
                "i types a text; enter runs \(sourceName) + the SAE on it and shades it by this feature",
                at: Point(x: area.x + 1, y: area.y + 2), style: theme.dim, clip: area)
        }
    }

    /// The features with the largest activations anywhere in `test`, as "12 3.40, 7 2.10".
    static func strongest(_ test: SAETextActivations, excluding feature: Int) -> String {
        var best: [Int: Float] = [:]
        for token in test.features {
            for active in token where active.feature != feature {
                best[active.feature] = max(best[active.feature] ?? 0, active.activation)
            }
        }
        return best.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(4)
            .map { "\($0.key) \(String(format: "%.2f", $0.value))" }.joined(separator: ", ")
    }

    /// WordPiece tokens as words (`##` pieces joined), each shaded by `activations` relative to
    /// `maximum`, windowed so the `center` token shows.
    func renderShaded(
        tokens: [String], activations: [Float], center: Int, maximum: Float, into frame: inout Frame, area: Rect,
        theme: Theme
    ) {
        var pieces: [(text: String, value: Float)] = []
        // SmolLM2's byte-level pieces carry their own spaces; WordPiece's are joined with one.
        let ownSpaces = readsLanguageModel
        for (index, token) in tokens.enumerated() {
            let clean = UntrustedText.sanitized(token)
            let continues = !ownSpaces && clean.hasPrefix("##") && index > 0
            let spaced = continues || index == 0 || ownSpaces ? "" : " "
            pieces.append((spaced + (continues ? String(clean.dropFirst(2)) : clean), activations[index]))
        }
        // Start far enough in that the center token sits in the first third of the row.
        var offsets: [Int] = []
        var total = 0
        for piece in pieces {
            offsets.append(total)
            total += TextWidth.of(piece.text)
        }
        let centerOffset = offsets.indices.contains(center) ? offsets[center] : 0
        let skip = total <= area.width ? 0 : max(0, min(centerOffset - area.width / 3, total - area.width))
        var x = area.x - skip
        if skip > 0 {
            frame.draw("…", at: Point(x: area.x, y: area.y), style: theme.dim, clip: area)
        }
        for piece in pieces {
            let width = TextWidth.of(piece.text)
            defer { x += width }
            guard x + width > area.x + (skip > 0 ? 1 : 0), x < area.maxX else { continue }
            let leading = piece.text.hasPrefix(" ") ? 1 : 0
            let word = String(piece.text.dropFirst(leading))
            frame.draw(
                word, at: Point(x: x + leading, y: area.y), style: shade(piece.value, maximum: maximum, theme: theme),
                clip: Rect(x: area.x + (skip > 0 ? 1 : 0), y: area.y, width: area.width - (skip > 0 ? 1 : 0), height: 1)
            )
        }
    }

    /// A token's style: its background on the heat ramp by activation (none at zero), text kept
    /// readable; monochrome terminals get underline, then reverse for the strongest.
    func shade(_ value: Float, maximum: Float, theme: Theme) -> Style {
        guard value > 0, maximum > 0 else { return theme.text }
        let fraction = Double(min(1, value / maximum))
        if theme.isMonochrome { return Style(attributes: fraction > 0.5 ? [.reverse, .bold] : [.underline]) }
        // Weak activations still show: the ramp starts a quarter of the way up.
        let background = theme.heatColor(0.25 + 0.75 * fraction)
        let light = 0.299 * Double(background.red) + 0.587 * Double(background.green) + 0.114 * Double(background.blue)
        return Style(
            foreground: light > 140 ? RGB(0, 0, 0) : RGB(255, 255, 255), background: background, attributes: .bold)
    }

    // MARK: - Training

    private func renderTraining(_ listing: SAEListing, into frame: inout Frame, area: Rect, theme: Theme) {
        let curve = self.curve
        let step = max(listing.step, curve.last?.step ?? 0)
        let running = live[listing.id] != nil && step < listing.steps
        let status =
            running
            ? "training · step \(step) of \(listing.steps)"
            : step >= listing.steps
                ? "trained \(listing.steps) steps" : "stopped at step \(step) of \(listing.steps) · t resumes it"
        frame.draw(
            status, at: Point(x: area.x + 1, y: area.y), style: running ? theme.status(.info) : theme.text, clip: area)
        Gauge(fraction: Double(step) / Double(max(1, listing.steps)), label: "\(step)/\(listing.steps)").render(
            into: &frame, area: Rect(x: area.x + 40, y: area.y, width: min(40, area.width - 42), height: 1),
            theme: theme)
        guard !curve.isEmpty else {
            frame.draw(
                "No logged steps yet.", at: Point(x: area.x + 1, y: area.y + 2), style: theme.dim, clip: area)
            return
        }
        // Losses span decades: they are drawn on a log scale. Each curve has its range beside it
        // (low end left, high end right), and a constant one is a flat line saying so.
        // Where the loss is the MSE alone (no AuxK or L1 term logged), one row says so rather than
        // two identical rows.
        let lossIsMSE = curve.allSatisfy { $0.loss == $0.mse }
        var series: [(name: String, values: [Double], format: String, log: Bool)] = [
            (lossIsMSE ? "loss=MSE (log)" : "loss (log)", curve.map(\.loss), "%.4g", true),
            ("MSE (log)", curve.map(\.mse), "%.4g", true),
            ("L0", curve.map(\.l0), "%.1f", false),
            ("explained var", curve.map { 1 - $0.fvu }, "%.3f", false),
            ("dead", curve.map { $0.dead * 100 }, "%.1f%%", false),
            ("dense >10%", curve.map { $0.dense * 100 }, "%.1f%%", false),
            ("learning rate", curve.map(\.learningRate), "%.2e", false),
        ]
        if lossIsMSE { series.remove(at: 1) }
        let labelWidth = 14
        let rangeWidth = 9
        let valueWidth = 11
        let chartWidth = max(10, area.width - labelWidth - 2 * rangeWidth - valueWidth - 6)
        let spacing = max(1, min(3, (area.height - 4) / series.count))
        // The columns named once: lowest, the curve over the steps, highest, the last step's value.
        let header = Self.columnHeader(
            labelWidth: labelWidth, rangeWidth: rangeWidth, chartWidth: chartWidth,
            steps: "steps \(curve.first?.step ?? 0) → \(curve.last?.step ?? step)")
        frame.draw(header, at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
        let lastX = area.maxX - valueWidth - 1
        frame.draw(
            TextWidth.fit("last", toColumns: valueWidth, alignment: .trailing), at: Point(x: lastX, y: area.y + 1),
            style: theme.dim, clip: area)
        for (index, item) in series.enumerated() {
            let y = area.y + 2 + index * spacing
            guard y < area.maxY - 1 else { break }
            frame.draw(item.name, at: Point(x: area.x + 1, y: y), style: theme.text, clip: area)
            let finite = item.values.filter(\.isFinite)
            let low = finite.min() ?? 0
            let high = finite.max() ?? 0
            let chartX = area.x + 1 + labelWidth + rangeWidth + 1
            frame.draw(
                TextWidth.fit(String(format: item.format, low), toColumns: rangeWidth, alignment: .trailing),
                at: Point(x: area.x + 1 + labelWidth, y: y), style: theme.dim, clip: area)
            if high - low <= max(abs(high), 1e-12) * 1e-9 {
                let flat = String(repeating: "─", count: max(0, chartWidth - 10)) + " constant"
                frame.draw(flat, at: Point(x: chartX, y: y), style: theme.dim, clip: area)
            } else {
                let plotted = item.log ? item.values.map { $0 > 0 ? log10($0) : .nan } : item.values
                let glyphs = Sparkline(values: Self.resample(plotted, to: chartWidth)).glyphs(width: chartWidth)
                frame.draw(glyphs, at: Point(x: chartX, y: y), style: theme.accent, clip: area)
                frame.draw(
                    String(format: item.format, high), at: Point(x: chartX + chartWidth + 1, y: y), style: theme.dim,
                    clip: area)
            }
            let last = String(format: item.format, item.values.last ?? 0)
            frame.draw(
                TextWidth.fit(last, toColumns: valueWidth, alignment: .trailing),
                at: Point(x: area.maxX - valueWidth - 1, y: y), style: theme.title, clip: area)
        }
        frame.draw(
            "steps \(curve.first?.step ?? 0)…\(step) · loss = MSE loss (‖x − x̂‖² per token) + AuxK or L1 · v features",
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    /// "lowest", the steps the curves span, "highest", laid over the columns the rows use.
    static func columnHeader(labelWidth: Int, rangeWidth: Int, chartWidth: Int, steps: String) -> String {
        String(repeating: " ", count: labelWidth)
            + TextWidth.fit("lowest", toColumns: rangeWidth, alignment: .trailing) + " "
            + TextWidth.fit(steps, toColumns: chartWidth, alignment: .center) + " highest"
    }

    /// `values` squeezed (bucket means) or kept to at most `width` points.
    static func resample(_ values: [Double], to width: Int) -> [Double] {
        guard values.count > width, width > 0 else { return values }
        return (0..<width).map { bucket in
            let from = bucket * values.count / width
            let to = max(from + 1, (bucket + 1) * values.count / width)
            return values[from..<to].reduce(0, +) / Double(to - from)
        }
    }

    /// 100000 as "100,000".
    static func grouped(_ value: Int) -> String { LoupeBase.grouped(value) }
}
