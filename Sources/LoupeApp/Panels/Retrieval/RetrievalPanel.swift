import Foundation
import LoupeKit
import LoupeRetrieval
import LoupeTUI

/// The RAG inspector: a query box, the ranked hits with every retriever's score and rank and
/// how fusion moved them, the selected chunk with its query terms highlighted and BM25's
/// per-term parts, BM25 and dense side by side, and the whole document.
package struct RetrievalPanel: Panel {
    package let id = PanelID.retrieval
    package let title = "Retrieval"

    package enum View: String, Hashable, Sendable {
        case hits = "Hits"
        case sideBySide = "BM25 | dense"
        case missed = "Relevant, not retrieved"
        case document = "Document"
        case curves = "HNSW recall / queries per second"
    }

    package var input = LineEditor("")
    package private(set) var editing = false
    package private(set) var options = RetrievalService.Options()
    package private(set) var result: RetrievalResult?
    package private(set) var lastQuery: String?
    package private(set) var loading: RetrievalRequest?
    package private(set) var error: String?
    package var view = View.hits
    package var list = ListState()
    package private(set) var document: (id: String, document: RetrievalDocument?)?
    package var documentOffset = 0
    /// The recall/QPS sweeps kept by `bench hnsw --record`, by workload, once asked for (`c`).
    package private(set) var curves: [ANNCurves]?
    /// The workload the curves view draws (↑/↓ for another).
    package private(set) var curvesWorkload = 0
    /// Examples to pick with ↑/↓: free text, then two of Cranfield's judged queries (1 and 2), so
    /// the demo shows relevance marks and the query's metrics.
    package private(set) var queries = LineHistory(entries: [
        "shock wave boundary layer interaction",
        "flutter of swept wings at transonic speeds",
        "what are the structural and aeroelastic problems associated with flight of high speed aircraft .",
        "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .",
    ])

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "Retrieval",
            [
                KeyBinding(
                    [.character("i")], .panel(.own(Action.edit)),
                    help: "Type a query, or pick one with ↑/↓ (enter searches, esc cancels)", footer: "query"),
                KeyBinding(
                    [.character("m")], .panel(.own(Action.retriever)),
                    help: "Next retriever: hybrid, BM25, dense (the list re-ranks)", footer: "retriever"),
                KeyBinding([.character("t")], .panel(.own(Action.stem)), help: "BM25 stemming on or off (Porter)"),
                KeyBinding([.character("x")], .panel(.own(Action.mmr)), help: "MMR diversity re-ranking on or off"),
                KeyBinding(
                    [.character("v")], .panel(.own(Action.view)),
                    help: "Next view: hits, BM25 and dense side by side, relevant documents missed (judged queries)",
                    footer: "view"),
                KeyBinding(
                    [.character("+")], .panel(.own(Action.deeper)),
                    help: "More hits: k 10, 20, 50, 100", footer: "k±"),
                KeyBinding([.character("-")], .panel(.own(Action.shallower)), help: "Fewer hits"),
                KeyBinding(
                    [.character("]")], .panel(.own(Action.lambdaUp)), help: "MMR λ up by 0.1 (towards relevance)"),
                KeyBinding(
                    [.character("[")], .panel(.own(Action.lambdaDown)), help: "MMR λ down by 0.1 (towards diversity)"),
                KeyBinding([.enter], .panel(.open), help: "Open the selected hit's whole document", footer: "document"),
                KeyBinding(
                    [.character("c")], .panel(.own(Action.curves)),
                    help: "HNSW recall@10 against queries/s, Loupe's and the peers' (bench hnsw --record); ↑/↓ workload"
                ),
            ])
    }

    package var capturesText: Bool { editing }

    /// The selected hit: its document, chunk, title and text.
    package var selectionText: String? {
        guard let hits = result?.hits, list.selected < hits.count else { return nil }
        let hit = hits[list.selected]
        return "\(hit.documentID)#\(hit.ordinal) \(hit.title)\n\(hit.text)"
    }
    package var isSearchable: Bool { view == .hits && !(result?.hits.isEmpty ?? true) }

    /// `/` over the hits: title, document id and text.
    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        guard let hits = result?.hits else { return false }
        let texts = hits.map { "\($0.title) \($0.documentID) \($0.text)" }
        return list.selectNextMatch(
            in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
    }
    package var canGoBack: Bool { view == .document || view == .curves }
    package mutating func goBack() { view = .hits }

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape: editing = false
        case .enter:
            editing = false
            return search()
        case .up:
            if let picked = queries.previous(current: input.typedText) { input.setText(picked) }
        case .down:
            if let picked = queries.next() { input.setText(picked) }
        default: input.handle(key)
        }
        return []
    }

    private mutating func search() -> [PanelEffect] {
        let text = input.text.trimmingWhitespace()
        guard !text.isEmpty else { return [] }
        queries.record(text)
        let request = RetrievalRequest(text, options: options)
        loading = request
        error = nil
        return [.ask(Search(request: request))]
    }

    /// Re-runs the last query with the new options, so the list re-ranks live.
    private mutating func rerun() -> [PanelEffect] {
        guard let lastQuery else { return [] }
        input.setText(lastQuery)
        return search()
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .navigate(.retrieval(let request)):
            // An eval answer's ranking: the same query with the run's retriever and knobs.
            options = request.options
            view = .hits
            editing = false
            input.setText(request.query)
            return search()
        case .answered(let answer):
            if let (asked, load) = answer.matching(Search.self), asked.request == loading {
                loading = nil
                switch load {
                case .loaded(let found):
                    result = found
                    lastQuery = asked.request.query
                    list.selected = min(list.selected, max(0, found.hits.count - 1))
                case .failed(let message):
                    error = message
                }
            } else if let (_, loaded) = answer.matching(LoadCurves.self) {
                switch loaded {
                case .loaded(let found):
                    curves = found
                    curvesWorkload = min(curvesWorkload, max(0, found.count - 1))
                case .failed(let message): error = message
                }
            } else if let (asked, loaded) = answer.matching(OpenDocument.self) {
                switch loaded {
                case .loaded(let found): document = (asked.id, found)
                case .failed(let message): error = message
                }
                documentOffset = 0
            }
        case .navigate, .input, .tick, .jobProgress, .jobFinished, .terminate, .fileWritten, .edited, .readFinished,
            .workspaceChanged, .listening, .unreachable:
            break
        }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        // The side-by-side view's cursor is a rank over both columns.
        let count =
            view == .sideBySide
            ? max(result?.bm25Top.prefix(options.k).count ?? 0, result?.denseTop.prefix(options.k).count ?? 0)
            : result?.hits.count ?? 0
        switch action {
        case .specific(let own): return perform(own.action(as: Action.self))
        case .open:
            guard let hits = result?.hits, list.selected < hits.count else { return [] }
            view = .document
            document = nil
            return [.ask(OpenDocument(id: hits[list.selected].documentID))]
        case .down where view == .curves, .up where view == .curves:
            let workloads = curves?.count ?? 0
            guard workloads > 0 else { return [] }
            curvesWorkload = (curvesWorkload + (action == .down ? 1 : workloads - 1)) % workloads
        case .down:
            if view == .document { documentOffset += 1 } else { list.move(by: 1, count: count) }
        case .up:
            if view == .document {
                documentOffset = max(0, documentOffset - 1)
            } else {
                list.move(by: -1, count: count)
            }
        case .top: list.jump(toEnd: false, count: count)
        case .bottom: list.jump(toEnd: true, count: count)
        case .left, .right, .pageUp, .pageDown: break
        }
        return []
    }

    private mutating func perform(_ action: Action) -> [PanelEffect] {
        switch action {
        case .edit:
            editing = true
            input.selectAll()
            queries.reset()
        case .retriever:
            let all: [RetrievalService.Retriever] = [.hybrid, .bm25, .dense]
            options.retriever = all[((all.firstIndex(of: options.retriever) ?? 0) + 1) % all.count]
            return rerun()
        case .stem:
            options.stem.toggle()
            return rerun()
        case .mmr:
            options.mmr.toggle()
            return rerun()
        case .view:
            switch view {
            case .hits: view = .sideBySide
            case .sideBySide: view = result?.judged == nil ? .hits : .missed
            case .missed, .document, .curves: view = .hits
            }
        case .curves:
            view = .curves
            error = nil
            return [.ask(LoadCurves())]
        case .deeper, .shallower:
            let depths = [10, 20, 50, 100]
            let current = depths.lastIndex { $0 <= options.k } ?? 0
            let next = action == .deeper ? min(depths.count - 1, current + 1) : max(0, current - 1)
            guard depths[next] != options.k else { return [] }
            options.k = depths[next]
            return rerun()
        case .lambdaUp, .lambdaDown:
            guard options.mmr else { return [.status("λ weighs MMR's re-ranking: x turns MMR on first", .info)] }
            let step: Float = action == .lambdaUp ? 0.1 : -0.1
            options.mmrLambda = min(1, max(0, ((options.mmrLambda + step) * 10).rounded() / 10))
            return rerun()
        }
        return []
    }
}
