import Foundation
import LoupeBase
import LoupeKit
import LoupeRetrieval
import LoupeTUI

extension RetrievalPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let mode =
            "\(options.retriever.rawValue) · k \(options.k) · stem \(options.stem ? "on" : "off") · mmr "
            + (options.mmr ? String(format: "λ %.1f", options.mmrLambda) : "off")
            // Dense scores from int8 embeddings are said so: they are within ~0.002 of fp32's.
            + (result?.embeddingPrecision.map { $0 == "fp32" ? "" : " · \($0) embeddings" } ?? "")
        let inner = Block(title: "Retrieval · \(view.rawValue)", trailingTitle: mode, focused: context.focused).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 20, inner.height > 4 else { return }
        let rows = inner.split(.vertical, [.length(1), .fill(1)])
        renderQuery(into: &frame, area: rows[0], theme: theme)
        if view == .curves, error == nil {
            return renderCurves(into: &frame, area: rows[1], theme: theme)
        }
        if let error {
            let body = rows[1]
            frame.draw(
                UntrustedText.sanitized(error), at: Point(x: body.x + 1, y: body.y + 1), style: theme.status(.error),
                clip: body)
            return
        }
        guard let result else {
            let body = rows[1]
            let hint: [[Span]] = [
                [Span(loading == nil ? "Press " : "Searching…", theme.dim)]
                    + (loading == nil
                        ? [Span("i", theme.key), Span(" to type a query (↑/↓ for examples), then enter.", theme.dim)]
                        : []),
                [
                    Span("It searches the workspace's corpus; add documents with ", theme.dim),
                    Span(":ingest FILE…", theme.accent),
                ],
            ]
            for (index, line) in hint.enumerated() {
                frame.draw(line, at: Point(x: body.x + 1, y: body.y + 1 + index), clip: body)
            }
            return
        }
        var body = rows[1]
        if !result.unmatched.isEmpty, view != .document {
            // BM25 drops words it has never seen without a word: say which, and what is close.
            let words = result.unmatched.map { unmatched in
                "“\(unmatched.term)”" + (unmatched.suggestion.map { " → did you mean “\($0)”?" } ?? "")
            }
            let count = result.unmatched.count
            frame.draw(
                " \(count == 1 ? "a query term matches" : "\(count) query terms match") no chunk (BM25 skips "
                    + (count == 1 ? "it" : "them") + "): " + UntrustedText.sanitized(words.joined(separator: ", ")),
                at: Point(x: body.x, y: body.y), style: theme.status(.warn), clip: body)
            body = Rect(x: body.x, y: body.y + 1, width: body.width, height: body.height - 1)
        }
        if let judged = result.judged, view == .hits || view == .missed {
            renderJudged(judged, hits: result.hits, into: &frame, area: body.row(0), theme: theme)
            body = Rect(x: body.x, y: body.y + 1, width: body.width, height: body.height - 1)
            // A count of missed documents says nothing of which: the most relevant one, by name.
            if view == .hits, let first = judged.missed(from: Set(result.hits.map(\.documentID))).first {
                let title = UntrustedText.sanitized(judged.titles[first.document] ?? "")
                    .replacingOccurrences(of: "\n", with: " ")
                frame.draw(
                    [
                        Span(" most relevant missed: ", theme.dim), Span("✓\(first.grade) ", theme.status(.warn)),
                        Span(UntrustedText.sanitized(first.document), theme.text),
                        Span(title.isEmpty ? "" : " “\(title)”", theme.text),
                        Span(first.rank.map { " at rank \($0)" } ?? " not in the top 100", theme.dim),
                        Span(" · v v lists them all", theme.dim),
                    ], at: Point(x: body.x, y: body.y), clip: body)
                body = Rect(x: body.x, y: body.y + 1, width: body.width, height: body.height - 1)
            }
        }
        switch view {
        case .hits:
            if context.zoomed {
                renderHits(result.hits, into: &frame, area: body, theme: theme, focused: context.focused)
                return
            }
            // Wide: the hits beside the selected one's detail; narrow: the detail under them.
            let parts: [Rect] =
                body.width >= 110
                ? body.split(.horizontal, [.percentage(58), .fill(1)])
                : body.split(.vertical, [.percentage(55), .fill(1)])
            renderHits(result.hits, into: &frame, area: parts[0], theme: theme, focused: context.focused)
            if list.selected < result.hits.count {
                renderDetail(result.hits[list.selected], into: &frame, area: parts[1], theme: theme)
            }
        case .missed:
            renderMissed(result, into: &frame, area: body, theme: theme)
        case .sideBySide:
            renderSideBySide(result, into: &frame, area: body, theme: theme)
        case .document:
            renderDocument(into: &frame, area: body, theme: theme)
        case .curves:
            break
        }
    }

    private func renderQuery(into frame: inout Frame, area: Rect, theme: Theme) {
        if editing {
            input.render(into: &frame, area: area, prompt: [Span(" query › ", theme.key)], style: theme.input)
            return
        }
        let shown = lastQuery ?? "press i to type a query"
        frame.draw(
            [
                Span(" query › ", theme.dim),
                Span(
                    TextWidth.truncate(UntrustedText.sanitized(shown), toColumns: max(0, area.width - 10)),
                    lastQuery == nil ? theme.dim : theme.text),
            ], at: Point(x: area.x, y: area.y), clip: area)
    }

    /// `✓2` for a document judged relevant (with its grade), `·` judged not relevant, blank
    /// when unjudged or when the query has no judgments.
    package static func relevance(_ document: String, _ judged: JudgedQuery?) -> String {
        guard let grade = judged?.judgments[document] else { return "" }
        return grade > 0 ? "✓\(grade)" : "·"
    }

    /// `↑3` when fusion lifted a hit above its BM25 rank, `↓2` when it dropped, `new` when
    /// BM25 did not have it at all.
    package static func movement(_ hit: RetrievalService.Hit) -> String {
        guard let bm25 = hit.bm25 else { return "new" }
        let change = bm25.rank - hit.fused.rank
        return change > 0 ? "↑\(change)" : change < 0 ? "↓\(-change)" : "="
    }

    /// The rank-change column's header, named for what moved the hit against its BM25 rank:
    /// `Δrrf` for fusion, `Δdense` for the dense ranking; none for BM25 alone, where it is 0.
    package static func movementHeader(_ retriever: RetrievalService.Retriever) -> String? {
        switch retriever {
        case .hybrid: return "Δrrf"
        case .dense: return "Δdense"
        case .bm25: return nil
        }
    }

    private func renderHits(
        _ hits: [RetrievalService.Hit], into frame: inout Frame, area: Rect, theme: Theme, focused: Bool
    ) {
        func place(_ p: RetrievalService.Placement?, _ format: String) -> String {
            p.map { String(format: format, $0.score) + " (\($0.rank))" } ?? "—"
        }
        let judged = result?.judged
        let rows = hits.map { hit -> [String] in
            [
                "\(hit.rank)", Self.relevance(hit.documentID, judged), Self.movement(hit), place(hit.bm25, "%.2f"),
                place(hit.dense, "%.3f"),
                options.retriever == .hybrid ? String(format: "%.4f", hit.fused.score) : "",
                "\(hit.documentID)#\(hit.ordinal)",
                UntrustedText.sanitized(hit.shownTitle).replacingOccurrences(
                    of: "\n", with: " "),
            ]
        }
        // The title is what people scan: it comes first after the rank and keeps the most room;
        // the score that orders the list comes next (RRF's in hybrid mode), then each
        // retriever's, then the rank change, which give way, the least telling first, as the
        // pane narrows.
        var columns: [(TableColumn, Int)] = [
            (TableColumn("#", width: .length(3), alignment: .trailing), 0), (TableColumn("rel", width: .length(3)), 1),
            (TableColumn("title", width: .fill(1)), 7),
        ]
        if options.retriever == .hybrid { columns.append((TableColumn("rrf", width: .length(6)), 5)) }
        columns += [
            (TableColumn("bm25 (rank)", width: .length(11)), 3), (TableColumn("dense (rank)", width: .length(12)), 4),
        ]
        if let header = Self.movementHeader(options.retriever) {
            columns.append((TableColumn(header, width: .length(6)), 2))
        }
        columns.append((TableColumn("doc", width: .length(7)), 6))
        // The last columns give way first, down to rank, relevance and title.
        let shown = TableColumn.fitting(
            columns.map(\.0), in: area.width, dropping: Array(columns.indices.dropFirst(3).reversed()),
            fillMinimum: max(24, (area.width - 2) * 2 / 5)
        ).map { columns[$0] }
        var state = list
        TableView(columns: shown.map(\.0), rows: rows.map { row in shown.map { row[$0.1] } }, focused: focused)
            .render(into: &frame, area: area, state: &state, theme: theme)
    }

    /// Spans for `text` with the words whose terms are in `terms` highlighted, split into lines.
    static func highlighted(_ text: String, terms: Set<String>, stem: Bool, theme: Theme) -> [[Span]] {
        let tokenizer = RetrievalTokenizer(stem: stem)
        let bytes = Array(text.utf8)
        var spans: [Span] = []
        var cursor = 0
        for token in tokenizer.tokens(text) where terms.contains(token.term) {
            if token.range.lowerBound > cursor {
                spans.append(Span(String(decoding: bytes[cursor..<token.range.lowerBound], as: UTF8.self), theme.text))
            }
            spans.append(Span(String(decoding: bytes[token.range], as: UTF8.self), theme.match))
            cursor = token.range.upperBound
        }
        if cursor < bytes.count { spans.append(Span(String(decoding: bytes[cursor...], as: UTF8.self), theme.text)) }
        var lines: [[Span]] = [[]]
        for span in spans {
            let pieces = span.text.split(separator: "\n", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index > 0 { lines.append([]) }
                if !piece.isEmpty { lines[lines.count - 1].append(Span(UntrustedText.sanitized(piece), span.style)) }
            }
        }
        return lines
    }

    private func renderDetail(_ hit: RetrievalService.Hit, into frame: inout Frame, area: Rect, theme: Theme) {
        let inner = Block(title: "doc \(hit.documentID) · chunk \(hit.ordinal)", focused: false).render(
            into: &frame, area: area, theme: theme)
        var lines: [[Span]] = [
            [Span(UntrustedText.sanitized(hit.shownTitle), theme.accent)],
            [Span("bytes \(hit.startByte)–\(hit.endByte) of the document · enter opens it", theme.dim)],
            [Span("BM25 parts (idf × tf part):", theme.dim)],
        ]
        for part in hit.contributions {
            lines.append([
                Span("  " + part.term, theme.match),
                Span(
                    String(
                        format: "  %.2f × %.2f = %.2f  (tf %d)", part.idf, part.tfPart, part.score, part.termFrequency),
                    theme.text),
            ])
        }
        if hit.contributions.isEmpty { lines.append([Span("  no query term in this chunk", theme.dim)]) }
        lines.append([])
        lines += Self.highlighted(hit.text, terms: Set(hit.matchedTerms), stem: options.stem, theme: theme)
        _ = TextView(lines: lines).render(into: &frame, area: inner, offset: 0, theme: theme)
    }

    /// BM25's and dense's top k in two columns, each hit with its own retriever's score; the
    /// cursor (j/k) is a rank, lit in both columns, and the line under them says where each of
    /// its two documents ranks in the other retriever.
    private func renderSideBySide(_ result: RetrievalResult, into frame: inout Frame, area: Rect, theme: Theme) {
        let k = options.k
        let left = Array(result.bm25Top.prefix(k))
        let right = Array(result.denseTop.prefix(k))
        let shared = Set(left.map(\.documentID)).intersection(right.map(\.documentID))
        let cursor = min(list.selected, max(0, max(left.count, right.count) - 1))
        frame.draw(
            "\(shared.count) of \(k) documents in both top \(k)s (● in both) · j/k: rank \(cursor + 1)",
            at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
        guard area.height > 4 else { return }
        let columns = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 2).split(
            .horizontal, [.percentage(50), .fill(1)])
        func score(_ hit: RetrievalService.Hit, dense: Bool) -> String {
            (dense ? hit.dense : hit.bm25).map { String(format: dense ? "%.3f" : "%6.2f", $0.score) } ?? "—"
        }
        let sides = [("BM25 · score", left, false), ("dense · cosine", right, true)]
        for (index, (name, hits, dense)) in sides.enumerated() {
            let box = Block(title: name, focused: false).render(into: &frame, area: columns[index], theme: theme)
            if hits.isEmpty {
                // BM25 mode runs no dense search; otherwise the corpus has no embeddings.
                let why = options.retriever == .bm25 ? "BM25 mode runs no dense search (m)" : "no embeddings"
                frame.draw(why, at: Point(x: box.x + 1, y: box.y), style: theme.dim, clip: box)
            }
            let idWidth = hits.prefix(k).map { TextWidth.of($0.documentID) }.max() ?? 0
            // Keep the cursor's rank in view.
            let top = max(0, min(cursor - box.height / 2, hits.count - box.height))
            for (offset, hit) in hits.dropFirst(top).prefix(box.height).enumerated() {
                let row = top + offset
                let mark = shared.contains(hit.documentID) ? "●" : " "
                let rank = TextWidth.fit(String(row + 1), toColumns: 3, alignment: .trailing)
                let text =
                    "\(mark)\(rank). \(score(hit, dense: dense))  "
                    + TextWidth.fit(UntrustedText.sanitized(hit.documentID), toColumns: idWidth) + "  "
                    + UntrustedText.sanitized(hit.shownTitle).replacingOccurrences(of: "\n", with: " ")
                let style =
                    row == cursor ? theme.selection : shared.contains(hit.documentID) ? theme.accent : theme.text
                frame.draw(
                    TextWidth.fit(text, toColumns: box.width), at: Point(x: box.x, y: box.y + offset), style: style,
                    clip: box)
            }
        }
        func elsewhere(_ hits: [RetrievalService.Hit], dense: Bool, other: String) -> String {
            guard cursor < hits.count else { return "—" }
            let hit = hits[cursor]
            let place = dense ? hit.bm25 : hit.dense
            return "doc \(hit.documentID) " + score(hit, dense: dense).trimmingWhitespace() + ", "
                + (place.map { "\(other) #\($0.rank)" } ?? "not in \(other)'s candidates")
        }
        frame.draw(
            UntrustedText.sanitized(
                "rank \(cursor + 1) · BM25: " + elsewhere(left, dense: false, other: "dense") + " · dense: "
                    + elsewhere(right, dense: true, other: "BM25")),
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    private func renderDocument(into frame: inout Frame, area: Rect, theme: Theme) {
        guard let document else {
            frame.draw("Reading the document…", at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        guard let body = document.document else {
            frame.draw(
                "Document \(document.id) is not in the workspace.", at: Point(x: area.x + 1, y: area.y),
                style: theme.status(.error), clip: area)
            return
        }
        let hit = result?.hits.first { $0.documentID == document.id }
        let inner = Block(title: "document \(document.id) · esc back", focused: true).render(
            into: &frame, area: area, theme: theme)
        let lines = Self.highlighted(body.body, terms: Set(hit?.matchedTerms ?? []), stem: options.stem, theme: theme)
        _ = TextView(lines: lines).render(into: &frame, area: inner, offset: documentOffset, theme: theme)
    }

    /// `q2 of qrels.trec · nDCG@10 0.519 (bm25 0.523, dense 0.454) · 20 of 24 relevant missed (v)
    /// · R@100 0.333 · RR 1.000`: the metrics of the list shown, and what the other retrievers
    /// score. With MMR on, every figure is of the MMR'd list and says so; the retrievers' own
    /// figures (without MMR) follow the line's own.
    private func renderJudged(
        _ judged: JudgedQuery, hits: [RetrievalService.Hit], into frame: inout Frame, area: Rect, theme: Theme
    ) {
        let s = judged.scores
        let relevant = judged.judgments.values.filter { $0 > 0 }.count
        let missed = judged.missed(from: Set(hits.map(\.documentID))).count
        let ranking = judged.mmrLambda.map { String(format: "MMR λ %.1f list: ", $0) } ?? ""
        var spans = [
            Span(
                " q\(judged.id) of \(judged.source) · \(ranking)" + String(format: "nDCG@10 %.3f", s.ndcg[10] ?? 0),
                theme.accent)
        ]
        let others = ["bm25", "dense", "hybrid"].filter { $0 != options.retriever.rawValue || judged.mmrLambda != nil }
            .compactMap { name in judged.byRetriever[name].map { (name, $0.ndcg[10] ?? 0) } }
        let compared = others.map { String(format: "%@ %.3f", $0.0, $0.1) }.joined(separator: ", ")
        if !others.isEmpty, judged.mmrLambda == nil {
            spans.append(Span(" (" + compared + ")", theme.dim))
        }
        // What was missed before recall and RR: on a narrow screen it is what survives the cut.
        spans.append(
            Span(
                " · \(missed) of \(relevant) relevant missed (v)"
                    + String(format: " · R@100 %.3f · RR %.3f", s.recall[100] ?? 0, s.reciprocalRank), theme.accent))
        if !others.isEmpty, judged.mmrLambda != nil {
            spans.append(Span(" · without MMR: " + compared, theme.dim))
        }
        frame.draw(spans, at: Point(x: area.x, y: area.y), clip: area)
    }

    /// The documents judged relevant that the hits leave out: where the ranking put them
    /// (deeper than k, or not in the top 100 at all), most relevant first.
    private func renderMissed(_ result: RetrievalResult, into frame: inout Frame, area: Rect, theme: Theme) {
        guard let judged = result.judged else { return }
        let missed = judged.missed(from: Set(result.hits.map(\.documentID)))
        guard !missed.isEmpty else {
            frame.draw(
                " Every document judged relevant is in these \(result.hits.count) hits.",
                at: Point(x: area.x, y: area.y + 1), style: theme.status(.ok), clip: area)
            return
        }
        let rows = missed.map { item -> [String] in
            [
                "✓\(item.grade)", item.document, item.rank.map { "\($0)" } ?? "> 100",
                UntrustedText.sanitized(judged.titles[item.document] ?? "").replacingOccurrences(of: "\n", with: " "),
            ]
        }
        let columns = [
            TableColumn("rel", width: .length(3)), TableColumn("doc", width: .length(8)),
            TableColumn("rank", width: .length(5), alignment: .trailing), TableColumn("title", width: .fill(1)),
        ]
        var state = ListState()
        TableView(columns: columns, rows: rows, focused: false).render(
            into: &frame, area: area, state: &state, theme: theme)
    }
}
