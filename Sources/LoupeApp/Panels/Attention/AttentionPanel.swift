import Foundation
import LoupeKit
import LoupeTUI

/// MiniLM's attention for a sentence: a 6 × 12 grid of every head, one head's matrix with a
/// token cursor, a sortable table of head statistics, and the embedding lens. `m` switches to
/// SmolLM2 (``CausalView``): its 30 × 9 grid of head statistics and one head's causal pattern.
package struct AttentionPanel: Panel {
    package let id = PanelID.attention
    package let title = "Attention"

    /// The panel's views, cycled with `v`.
    package enum View: String, CaseIterable, Hashable, Sendable {
        case grid = "Model grid"
        case head = "Head"
        case lines = "Head lines"
        case table = "Head table"
        case lens = "Embedding lens"
        case neuron = "Neuron view"
    }

    package var input = LineEditor("The cat sat on the mat because it was tired.")
    /// The second sentence of a pair; nil outside pair mode.
    package var secondInput: LineEditor?
    /// Which input has the keyboard: 0 the sentence, 1 the pair's second sentence, nil none.
    package private(set) var editingField: Int?
    package var editing: Bool { editingField != nil }
    package private(set) var analysis: AttentionAnalysis?
    package private(set) var loading: AttentionRequest?
    package private(set) var error: String?
    package var view = View.grid
    /// What the head and head-lines views draw: one head or heads combined (`a`).
    package var aggregate = AttentionAnalysis.Aggregate.head
    package var layer = 0
    package var head = 0
    /// The head view's cursor: a query row and a key column.
    package var query = 0
    package var key = 0
    package var tableState = ListState()
    /// The model on show (`m`).
    package private(set) var model = Model.miniLM
    /// SmolLM2's analysis and cursors, kept while MiniLM is on show.
    package private(set) var smolLM2 = CausalView()
    package var sort = TableSort(column: 1, ascending: true)
    /// Sentences to pick with ↑/↓ while typing: examples, then what was analysed.
    package private(set) var sentences = LineHistory(entries: [
        "The boundary layer thickens downstream as the pressure gradient grows.",
        "Attention sinks pile up on [SEP] and punctuation.",
        "Time flies like an arrow; fruit flies like a banana.",
    ])

    package init() {}

    package var keymap: Keymap {
        // The footer names the keys of the model on show; every key stays bound.
        let causal = model == .smolLM2
        return Keymap(
            "Attention",
            [
                KeyBinding(
                    [.character("i")], .panel(.own(Action.edit)),
                    help: "Type a sentence, or pick one with ↑/↓ (enter analyses it, esc cancels)",
                    footer: causal ? "text" : "sentence"),
                KeyBinding(
                    [.character("m")], .panel(.own(Action.model)),
                    help: "Model: MiniLM (the embedder) ↔ SmolLM2 (the local language model, causal)", footer: "model"),
                KeyBinding(
                    [.character("c")], .panel(.own(Action.statistic)),
                    help: "SmolLM2's grid: shade by the next head statistic (induction, previous, sink, entropy)",
                    footer: causal ? "statistic" : nil),
                KeyBinding(
                    [.character("p")], .panel(.own(Action.pair)),
                    help: "Sentence pair: a second sentence, [CLS] A [SEP] B [SEP] (tab switches, p again for one)",
                    footer: causal ? nil : "pair"),
                KeyBinding(
                    [.character("v")], .panel(.own(Action.view)),
                    help:
                        "Next view: grid, head, head lines (BertViz), head table, embedding lens, neuron view (q, k, q·k)",
                    footer: "view"),
                KeyBinding(
                    [.character("a")], .panel(.own(Action.aggregate)),
                    help: "Head and lines views: one head → layer mean (heads overlaid) → mean of all heads → rollout",
                    footer: causal ? nil : "combine"),
                KeyBinding([.enter], .panel(.open), help: "Grid or table: open the selected head", footer: "open"),
                KeyBinding([.character("s")], .panel(.own(Action.sort)), help: "Head table: sort by the next column"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Head table: reverse the sort"),
                KeyBinding(
                    [.character("[")], .panel(.own(Action.previousHead)),
                    help: "Previous head (previous layer when heads are combined)"),
                KeyBinding(
                    [.character("]")], .panel(.own(Action.nextHead)),
                    help: "Next head (next layer when heads are combined)"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.export)),
                    help:
                        "Export what is shown as CSV (attention-L<l>-H<h>.csv, or -mean, -rollout when heads are combined)",
                    footer: causal ? nil : "export"),
                KeyBinding(
                    [.character("E")], .panel(.own(Action.exportJSON)),
                    help: "Export the current head as JSON, with its statistics (attention-L<l>-H<h>.json)"),
            ]
        )
    }

    package var capturesText: Bool { editing }
    package var canGoBack: Bool { model == .smolLM2 ? smolLM2.showsHead : view == .head || view == .neuron }
    package var isSearchable: Bool { false }
    package var initialEffects: [PanelEffect] { [] }

    package mutating func goBack() {
        if model == .smolLM2 {
            _ = smolLM2.toggleView()
        } else {
            view = .grid
        }
    }

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape:
            editingField = nil
        case .enter:
            editingField = nil
            return analyze()
        case .tab where secondInput != nil:
            editingField = editingField == 0 ? 1 : 0
            if editingField == 1 { secondInput?.selectAll() } else { input.selectAll() }
            sentences.reset()
        case .up:
            let current = editingField == 1 ? (secondInput?.typedText ?? "") : input.typedText
            if let picked = sentences.previous(current: current) { setActiveText(picked) }
        case .down:
            if let picked = sentences.next() { setActiveText(picked) }
        default:
            if editingField == 1 { secondInput?.handle(key) } else { input.handle(key) }
        }
        return []
    }

    private mutating func setActiveText(_ text: String) {
        if editingField == 1 { secondInput?.setText(text) } else { input.setText(text) }
    }

    private mutating func analyze() -> [PanelEffect] {
        let text = input.text.trimmingWhitespace()
        guard !text.isEmpty else { return [] }
        sentences.record(text)
        if model == .smolLM2 { return smolLM2.analyze(text) }
        let second = secondInput.map { $0.text.trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
        let request = AttentionRequest(text, second: second)
        loading = request
        error = nil
        return [.ask(Analyze(request: request))]
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        guard case .answered(let answer) = msg else { return [] }
        if answer.matching(Analyze.self) == nil { return smolLM2.receive(answer) }
        guard let (asked, result) = answer.matching(Analyze.self),
            asked.request == loading
        else { return [] }
        loading = nil
        switch result {
        case .loaded(let analysis):
            self.analysis = analysis
            query = min(query, analysis.count - 1)
            key = min(key, analysis.count - 1)
        case .failed(let message):
            error = message
        }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if case .specific(let own) = action { return perform(own.action(as: Action.self)) }
        if model == .smolLM2 {
            if smolLM2.analysis == nil, smolLM2.loading == nil, action == .open { return analyze() }
            return smolLM2.perform(action, page: max(1, area.height - 8))
        }
        guard let analysis else {
            if action == .open { return analyze() }
            return []
        }
        switch view {
        case .grid:
            switch action {
            case .left: head = max(0, head - 1)
            case .right: head = min(analysis.heads - 1, head + 1)
            case .up: layer = max(0, layer - 1)
            case .down: layer = min(analysis.layers - 1, layer + 1)
            case .open: view = .head
            case .pageUp, .pageDown, .top, .bottom, .specific: break
            }
        case .head, .lines, .neuron:
            // The cursor is a query token (and in the head and neuron views a key token); the
            // lines view's left and right are the previous and next head.
            switch action {
            case .left where view == .lines: head = max(0, head - 1)
            case .right where view == .lines: head = min(analysis.heads - 1, head + 1)
            case .left: key = max(0, key - 1)
            case .right: key = min(analysis.count - 1, key + 1)
            case .up: query = max(0, query - 1)
            case .down: query = min(analysis.count - 1, query + 1)
            case .top: query = 0
            case .bottom: query = analysis.count - 1
            case .open, .pageUp, .pageDown, .specific: break
            }
        case .table:
            switch action {
            case .down, .up, .pageDown, .pageUp, .top, .bottom:
                tableState.navigate(action, count: analysis.statistics.count)
            case .open:
                let rows = sortedStatistics(analysis)
                if tableState.selected < rows.count {
                    layer = rows[tableState.selected].layer
                    head = rows[tableState.selected].head
                    view = .head
                }
            case .left, .right, .specific: break
            }
        case .lens: break
        }
        return []
    }

    /// The panel's own keys; those that read an analysis do nothing before the first.
    private mutating func perform(_ action: Action) -> [PanelEffect] {
        if model == .smolLM2, let effects = performSmolLM2(action) { return effects }
        switch action {
        case .model:
            model = .smolLM2
            // The text on show, unless SmolLM2 has read it (or is reading it) already.
            let text = input.text.trimmingWhitespace()
            let current = smolLM2.loading?.text ?? smolLM2.analysis?.text
            return text.isEmpty || current == text ? [] : smolLM2.analyze(text)
        case .statistic:
            return []
        case .edit:
            editingField = 0
            input.selectAll()
            sentences.reset()
        case .pair:
            if secondInput == nil {
                secondInput = LineEditor("It was tired after the long day.")
                secondInput?.selectAll()
                editingField = 1
            } else {
                secondInput = nil
                editingField = nil
            }
        case .view:
            let all = View.allCases
            view = all[(all.firstIndex(of: view)! + 1) % all.count]
        case .exportJSON:
            guard let analysis else { return [] }
            return export("json", analysis.json(layer: layer, head: head))
        case .export:
            // What is on screen: one head, or the heads as combined.
            guard let analysis else { return [] }
            return export("csv", analysis.csv(analysis.matrix(aggregate, layer: layer, head: head)))
        case .aggregate:
            guard analysis != nil else { return [] }
            let all = AttentionAnalysis.Aggregate.allCases
            aggregate = all[(all.firstIndex(of: aggregate)! + 1) % all.count]
        case .nextHead, .previousHead:
            guard let analysis else { return [] }
            step(by: action == .nextHead ? 1 : -1, analysis)
        case .sort:
            // Head name and entropy read best ascending (focused heads first), masses descending.
            guard analysis != nil, view == .table else { return [] }
            let next = (sort.column + 1) % 7
            sort = TableSort(column: next, ascending: next <= 1)
        case .reverse:
            guard analysis != nil, view == .table else { return [] }
            sort.ascending.toggle()
        }
        return []
    }

    /// SmolLM2's answer to a key, nil for the keys it shares with MiniLM (the text's).
    private mutating func performSmolLM2(_ action: Action) -> [PanelEffect]? {
        switch action {
        case .model:
            model = .miniLM
            return []
        case .statistic:
            smolLM2.nextStatistic()
            return []
        case .view: return smolLM2.toggleView()
        case .nextHead: return smolLM2.step(by: 1)
        case .previousHead: return smolLM2.step(by: -1)
        case .edit: return nil
        case .pair, .sort, .reverse, .export, .exportJSON, .aggregate:
            return [.status("MiniLM's key: m switches back to MiniLM", .info)]
        }
    }

    /// Writes the current head's export to `attention-L<l>-H<h>.<extension>` in the working directory.
    private func export(_ fileExtension: String, _ contents: String) -> [PanelEffect] {
        let name =
            "attention-" + (fileExtension == "csv" ? aggregate : .head).fileStem(layer: layer, head: head) + "."
            + fileExtension
        return [.app(.writeFile(path: FileManager.default.currentDirectoryPath + "/" + name, contents: contents))]
    }

    private mutating func step(by delta: Int, _ analysis: AttentionAnalysis) {
        // Heads combined within a layer step by layers.
        if aggregate == .layerMean || aggregate == .rollout {
            layer = min(max(0, layer + delta), analysis.layers - 1)
            return
        }
        let index = min(max(0, layer * analysis.heads + head + delta), analysis.layers * analysis.heads - 1)
        layer = index / analysis.heads
        head = index % analysis.heads
    }

    /// The statistics in table order.
    func sortedStatistics(_ analysis: AttentionAnalysis) -> [AttentionAnalysis.HeadStatistics] {
        let key: (AttentionAnalysis.HeadStatistics) -> Double = { s in
            switch self.sort.column {
            case 1: return s.entropy
            case 2: return s.classifierMass
            case 3: return s.separatorMass
            case 4: return s.punctuationMass
            case 5: return s.previousToken
            case 6: return s.nextToken
            default: return Double(s.layer * 100 + s.head)
            }
        }
        return analysis.statistics.sorted { sort.ascending ? key($0) < key($1) : key($0) > key($1) }
    }
}
