import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

/// Annotation queues, as Langfuse and LangSmith keep them, from the keyboard: the queues with
/// each annotator's progress; an item with its whole context (question, answer, expected output,
/// scorers' verdicts, the trace's steps) beside the rubric, where one key labels (each label its
/// own transaction); and the queue's run's scorer calibrated against the labels, its
/// disagreements one `enter` away.
package struct ReviewPanel: Panel {
    package let id = PanelID.review
    package let title = "Review"

    package enum View: Hashable, Sendable { case queues, item, calibration }

    package private(set) var overview: ReviewBrowser.Overview?
    package var queueList = ListState()
    package private(set) var view = View.queues
    /// The queue the item view shows (set before its first item arrives).
    package private(set) var openQueue: String?
    package private(set) var opened: ReviewBrowser.Opened?
    package var contextOffset = 0
    package private(set) var calibration: ReviewBrowser.Calibration?
    /// The calibration asked for and not yet answered.
    package private(set) var calibrating: Calibrate?
    package var disagreementList = ListState()
    /// How far the calibration report is scrolled (ctrl+d, ctrl+u).
    package var reportOffset = 0
    package var noteInput = LineEditor()
    package private(set) var editingNote = false
    package private(set) var error: String?
    /// The view the item view was opened from (the queues, or a calibration's disagreement), for esc.
    package private(set) var itemFrom = View.queues
    private var calibrationFrom = View.queues
    /// The newest item request made, and the newest whose answer is on show: an older answer
    /// arriving late (keys pressed quickly) never replaces a newer one.
    private var serial = 0
    private var shownSerial = 0

    package init() {}

    // MARK: - Keys

    package var keymap: Keymap {
        let rubric = view == .item ? rubricBindings : []
        let taken = Set(rubric.flatMap(\.keys))
        let footers: [Key: String]
        switch view {
        case .queues:
            // A pairwise queue compares two runs: there is no judge of one run to calibrate.
            footers =
                selectedListing?.queue.record.mode == "pairwise"
                ? [.enter: "judge"] : [.enter: "label", .character("c"): "calibrate"]
        case .item where opened?.item?.pair != nil:
            footers = [.enter: "next", .character("n"): "reason", .character("s"): "skip", .character("u"): "undo"]
        case .item:
            footers = [
                .enter: "next", .character("n"): "note", .character("s"): "skip", .character("u"): "undo",
                .character("c"): "calibrate",
            ]
        case .calibration: footers = [.enter: "open item", .character("s"): "scorer"]
        }
        let own = [
            KeyBinding(
                [.enter], .panel(.open),
                help: "Queue: open at your next item (its rubric's keys label at once) · item: the next · "
                    + "disagreement: open its item"),
            KeyBinding([.character("n")], .panel(.own(Action.note)), help: "Item: write the note (enter keeps it)"),
            KeyBinding(
                [.character("s")], .panel(.own(Action.skip)),
                help: "Item: skip it (it comes back last) · calibration: the next scorer"),
            KeyBinding([.character("u")], .panel(.own(Action.undo)), help: "Item: take back your last label"),
            KeyBinding([.character("[")], .panel(.own(Action.previous)), help: "Item: the previous item"),
            KeyBinding([.character("]")], .panel(.own(Action.next)), help: "Item: the next item (labelled or not)"),
            KeyBinding([.character(" ")], .panel(.own(Action.page)), help: "Item: scroll the context a page down"),
            KeyBinding(
                [.character("t")], .panel(.own(Action.trace)),
                help: "Item: open its trace in Traces (ctrl+o comes back)"),
            KeyBinding(
                [.character("d")], .panel(.own(Action.keep)),
                help: "Item: keep it as a dataset item: the dataset add line on the : line, expected output to edit"),
            KeyBinding(
                [.character("c")], .panel(.own(Action.calibrate)),
                help: "Calibrate: the queue's run's scorer against the people's labels"),
            KeyBinding([.character("q")], .panel(.own(Action.back)), help: "Item, calibration: back (as esc)"),
            KeyBinding(
                [.control("r")], .panel(.own(Action.reload)), help: "Read again (the queues, the item, the calibration)"
            ),
        ]
        .filter { binding in !binding.keys.contains(where: taken.contains) }
        .map { binding in
            var binding = binding
            binding.footer = binding.keys.first.flatMap { footers[$0] }
            return binding
        }
        return Keymap("Review", rubric + own)
    }

    /// One binding per rubric key of the open queue: options, true and false, the digits of a
    /// numeric criterion typed with one.
    private var rubricBindings: [KeyBinding] {
        guard let rubric = opened?.queue.rubric else { return [] }
        var bindings: [KeyBinding] = []
        for criterion in rubric.criteria {
            let name = UntrustedText.sanitized(criterion.name)
            switch criterion.kind {
            case .categorical(let options):
                for option in options {
                    guard let key = Self.key(option.key) else { continue }
                    bindings.append(
                        KeyBinding(
                            [key], .panel(.own(Label(option.key))),
                            help: "Label \(name): \(UntrustedText.sanitized(option.name))"))
                }
            case .boolean(let trueKey, let falseKey):
                for (text, verdict) in [(trueKey, "true"), (falseKey, "false")] {
                    guard let key = Self.key(text) else { continue }
                    bindings.append(
                        KeyBinding([key], .panel(.own(Label(text))), help: "Label \(name): \(verdict)"))
                }
            case .numeric(let lower, let upper, _, _) where criterion.takesDigit && lower <= upper:
                for digit in Int(lower)...Int(upper) {
                    bindings.append(
                        KeyBinding(
                            [.character(Character(String(digit)))], .panel(.own(Label(String(digit)))),
                            help: "Label \(name): \(digit)"))
                }
            case .numeric, .text: break
            }
        }
        return bindings
    }

    /// The key a rubric's one-character key text stands for; nil for anything else (a stored
    /// rubric is read back from the workspace, where anyone may have written it).
    private static func key(_ text: String) -> Key? {
        guard text.count == 1, let character = text.first, !character.isNewline, character != " " else { return nil }
        return .character(character)
    }

    /// In the item view a rubric's keys (digits among them) and the view's own come before the
    /// global ones; in the calibration view `q` goes back rather than quitting.
    package var takesKeysFirst: Bool { view != .queues }

    package var initialEffects: [PanelEffect] { [.ask(ListQueues())] }
    package var isLoadingFirstView: Bool { overview == nil }
    package var capturesText: Bool { editingNote }
    package var canGoBack: Bool { view != .queues }
    package var isSearchable: Bool { view == .queues }

    package mutating func shown() -> [PanelEffect] {
        // Labels made with `:review label` or by another annotator show when the tab is chosen.
        var effects: [PanelEffect] = [.ask(ListQueues())]
        if view == .item, serial == shownSerial, let queue = openQueue, let key = item?.key {
            effects.append(.ask(OpenItem(queue: queue, key: key, serial: nextSerial())))
        }
        return effects
    }

    package var selectionText: String? {
        switch view {
        case .queues: return selectedListing.map { UntrustedText.sanitized($0.queue.name) }
        case .item:
            guard let item = opened?.item else { return nil }
            return item.answer?.shownOutput ?? item.pair.map { "A: \($0.left.shownOutput)\nB: \($0.right.shownOutput)" }
                ?? item.key
        case .calibration:
            guard let calibration else { return nil }
            let list = calibration.disagreements
            return disagreementList.selected < list.count
                ? list[disagreementList.selected].key : calibration.summary.joined(separator: "\n")
        }
    }

    // MARK: - Data

    package var selectedListing: ReviewBrowser.Listing? {
        guard let queues = overview?.queues, queueList.selected < queues.count else { return nil }
        return queues[queueList.selected]
    }

    /// The item on show.
    package var item: ReviewService.Item? { opened?.item }

    /// The rubric's first text criterion: what `n` writes.
    package var noteCriterion: Rubric.Criterion? { opened?.queue.rubric.criteria.first { $0.kind == .text } }

    private mutating func nextSerial() -> Int {
        serial += 1
        return serial
    }

    // MARK: - Messages

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer): return receive(answer)
        case .jobFinished, .workspaceChanged:
            // A `:review` command, or another annotator, may have labelled: read again, but never
            // over an item read still under way.
            var effects: [PanelEffect] = [.ask(ListQueues())]
            if view == .item, serial == shownSerial, let queue = openQueue, let key = item?.key {
                effects.append(.ask(OpenItem(queue: queue, key: key, serial: nextSerial())))
            }
            return effects
        default: return []
        }
    }

    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, load) = answer.matching(ListQueues.self) {
            switch load {
            case .loaded(let loaded):
                let selected = selectedListing?.queue.name
                overview = loaded
                queueList.selected =
                    loaded.queues.firstIndex { $0.queue.name == selected }
                    ?? min(queueList.selected, max(0, loaded.queues.count - 1))
                if view == .queues { error = nil }
            case .failed(let message):
                overview = overview ?? ReviewBrowser.Overview(queues: [], annotator: nil, annotatorProblem: nil)
                error = message
            }
        } else if let (asked, load) = answer.matching(NextItem.self) {
            return show(load, queue: asked.queue, serial: asked.serial)
        } else if let (asked, load) = answer.matching(OpenItem.self) {
            return show(load, queue: asked.queue, serial: asked.serial)
        } else if let (asked, load) = answer.matching(LabelItem.self) {
            return show(load, queue: asked.queue, serial: asked.serial)
        } else if let (asked, load) = answer.matching(SkipItem.self) {
            return show(load, queue: asked.queue, serial: asked.serial)
        } else if let (asked, load) = answer.matching(UndoLabel.self) {
            return show(load, queue: asked.queue, serial: asked.serial)
        } else if let (asked, load) = answer.matching(Calibrate.self), asked == calibrating {
            calibrating = nil
            switch load {
            case .loaded(let loaded):
                if calibration?.queue != loaded.queue || calibration?.scorer != loaded.scorer {
                    disagreementList = ListState()
                    reportOffset = 0
                }
                calibration = loaded
                error = nil
            case .failed(let message):
                calibration = nil
                error = message
            }
        }
        return []
    }

    /// An item answer: shown when it is the newest asked; what a write did is said either way.
    private mutating func show(_ load: Load<ReviewBrowser.Opened>, queue: String, serial asked: Int) -> [PanelEffect] {
        guard queue == openQueue else { return [] }
        switch load {
        case .failed(let message):
            shownSerial = max(shownSerial, asked)
            error = message
            return [.status("✗ " + message, .error)]
        case .loaded(let answer):
            // The queue list's figures follow every answer, without reading it again.
            if let index = overview?.queues.firstIndex(where: { $0.queue.name == answer.queue.name }) {
                overview?.queues[index].progress = answer.progress
                overview?.queues[index].headToHead = answer.headToHead
                if answer.isAssigned { overview?.queues[index].yourFinished = answer.finished.count }
            }
            let said = status(answer)
            if asked >= shownSerial {
                shownSerial = asked
                if opened?.item?.key != answer.item?.key { contextOffset = 0 }
                opened = answer
                error = nil
            }
            return said.map { [.status($0.text, $0.level)] } ?? []
        }
    }

    /// What the status line says after a write.
    private func status(_ answer: ReviewBrowser.Opened) -> (text: String, level: StatusLevel)? {
        guard let change = answer.change else { return nil }
        let mine = answer.progress.annotators.first { $0.name == answer.annotator }
        let done = mine.map { " · you \($0.finished)/\($0.assigned) done" } ?? ""
        switch change {
        case .labelled(let labels):
            let said = labels.map { "\($0.criterion)=\($0.value)" }.joined(separator: " ")
            let key = labels.first?.itemKey ?? ""
            let finished = answer.finished.contains(key) ? " · item done, enter: next" : ""
            return (UntrustedText.sanitized("✓ \(said)") + done + finished, .ok)
        case .skipped(let key):
            return (UntrustedText.sanitized("skipped \(key)") + ": it comes back after the rest", .info)
        case .undone(let label?):
            return (UntrustedText.sanitized("↶ took back \(label.criterion)=\(label.value) on \(label.itemKey)"), .ok)
        case .undone(nil):
            return ("nothing of yours to undo in " + UntrustedText.sanitized(answer.queue.name), .warn)
        }
    }

    // MARK: - Keys

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape, .control("c"):
            editingNote = false
        case .enter:
            editingNote = false
            guard let queue = openQueue, let item, let note = noteCriterion else { return [] }
            let text = noteInput.text.trimmingWhitespace()
            guard !text.isEmpty else { return [.status("an empty note is not stored", .warn)] }
            return [
                .ask(LabelItem(queue: queue, key: item.key, criterion: note.name, value: text, serial: nextSerial()))
            ]
        default:
            noteInput.handle(key)
        }
        return []
    }

    package mutating func goBack() {
        editingNote = false
        switch view {
        case .item: view = itemFrom == .calibration && calibration != nil ? .calibration : .queues
        case .calibration: view = calibrationFrom == .item && opened != nil ? .item : .queues
        case .queues: break
        }
        if view == .queues { error = nil }
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        guard view == .queues, let queues = overview?.queues else { return false }
        let texts = queues.map { "\($0.queue.name) \($0.queue.rubric.name) \($0.queue.record.source)" }
        return queueList.selectNextMatch(in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        let page = max(1, area.height / 2)
        switch action {
        case .specific(let own):
            // A rubric key labels only the item on show (the keymap binds them only there).
            if let label = own.matching(Label.self) { return view == .item ? self.label(label.key) : [] }
            return perform(own.action(as: Action.self), area: area)
        case .open:
            switch view {
            case .queues: return openSelectedQueue()
            case .item:
                guard let queue = openQueue else { return [] }
                return [.ask(NextItem(queue: queue, after: item?.key, serial: nextSerial()))]
            case .calibration: return openDisagreement()
            }
        case .left, .right:
            // Only the item view has a left and right: the previous and the next item.
            guard view == .item else { return [] }
            return step(by: action == .left ? -1 : 1)
        case .up, .down, .pageUp, .pageDown, .top, .bottom:
            switch view {
            case .queues: queueList.navigate(action, count: overview?.queues.count ?? 0, page: page)
            case .item: scrollContext(action, page: page)
            case .calibration:
                if action == .pageDown {
                    reportOffset += max(1, area.height / 3)
                } else if action == .pageUp {
                    reportOffset = max(0, reportOffset - max(1, area.height / 3))
                } else {
                    disagreementList.navigate(action, count: calibration?.disagreements.count ?? 0)
                }
            }
        }
        return []
    }

    /// The panel's own keys; those of the item view do nothing in the queues and calibration
    /// views (no item is on show there).
    private mutating func perform(_ action: Action, area: Rect) -> [PanelEffect] {
        switch action {
        case .reload:
            var effects: [PanelEffect] = [.ask(ListQueues())]
            if view == .item, let queue = openQueue, let key = item?.key {
                effects.append(.ask(OpenItem(queue: queue, key: key, serial: nextSerial())))
            } else if view == .calibration, let calibration {
                effects += calibrate(calibration.queue, scorer: calibration.scorer)
            }
            return effects
        case .back:
            goBack()
        case .calibrate:
            let queue: String?
            switch view {
            case .queues: queue = selectedListing?.queue.name
            case .item: queue = openQueue
            case .calibration: queue = calibration?.queue ?? calibrating?.queue
            }
            guard let queue else { return [] }
            return calibrate(queue, scorer: calibration?.queue == queue ? calibration?.scorer : nil)
        case .skip:
            switch view {
            case .queues: break
            case .item:
                guard let queue = openQueue, let item else { return [] }
                return [.ask(SkipItem(queue: queue, key: item.key, serial: nextSerial()))]
            case .calibration:
                // The next scorer.
                guard let calibration, !calibration.scorers.isEmpty else { return [] }
                let index = calibration.scorers.firstIndex(of: calibration.scorer) ?? -1
                return calibrate(
                    calibration.queue, scorer: calibration.scorers[(index + 1) % calibration.scorers.count])
            }
        case .note:
            guard view == .item else { return [] }
            guard item != nil, let note = noteCriterion else {
                return [.status("this rubric has no note (a text criterion)", .info)]
            }
            let mine = item?.labels.last { $0.annotator == opened?.annotator && $0.criterion == note.name }
            noteInput = LineEditor(mine?.value ?? "")
            noteInput.selectAll()
            editingNote = true
        case .undo:
            guard view == .item, let queue = openQueue else { return [] }
            return [.ask(UndoLabel(queue: queue, key: item?.key, serial: nextSerial()))]
        case .previous, .next:
            guard view == .item else { return [] }
            return step(by: action == .previous ? -1 : 1)
        case .keep:
            guard view == .item else { return [] }
            return keep()
        case .trace:
            guard view == .item else { return [] }
            guard let trace = item?.record.traceID ?? item?.answer?.result.traceID else {
                return [.status("this item links to no trace", .info)]
            }
            return [.navigate(.trace(trace))]
        case .page:
            guard view == .item else { return [] }
            scrollContext(.pageDown, page: max(1, area.height / 2))
        }
        return []
    }

    /// The queue list's enter: the selected queue at the annotator's next item.
    private mutating func openSelectedQueue() -> [PanelEffect] {
        guard let listing = selectedListing else { return [] }
        if overview?.annotatorProblem != nil {
            // Nobody to label as: ask for the name on the command line (kept for this person).
            error = nil
            return [.editCommand("review as "), .status("who is labelling? type your name and enter", .info)]
        }
        return open(listing.queue.name)
    }

    /// The calibration's enter: the selected disagreement's item.
    private mutating func openDisagreement() -> [PanelEffect] {
        guard let calibration, disagreementList.selected < calibration.disagreements.count else { return [] }
        let key = calibration.disagreements[disagreementList.selected].key
        // The item is opened on top of the calibration: esc comes back to it, and from it to
        // the queues (never round again to an item the calibration was opened from).
        calibrationFrom = .queues
        return open(calibration.queue, key: key, from: .calibration)
    }

    /// Scrolls the item's context: a line, half a page (`page` lines), to the top or the end.
    private mutating func scrollContext(_ action: PanelAction, page: Int) {
        switch action {
        case .down: contextOffset += 1
        case .up: contextOffset = max(0, contextOffset - 1)
        case .pageDown: contextOffset += page
        case .pageUp: contextOffset = max(0, contextOffset - page)
        case .top: contextOffset = 0
        case .bottom: contextOffset = Int.max / 2
        case .left, .right, .open, .specific: break
        }
    }

    /// Opens `queue` at the annotator's next item, or at `key`.
    private mutating func open(_ queue: String, key: String? = nil, from origin: View = .queues) -> [PanelEffect] {
        if openQueue != queue { opened = nil }
        openQueue = queue
        view = .item
        itemFrom = origin
        error = nil
        editingNote = false
        let serial = nextSerial()
        if let key { return [.ask(OpenItem(queue: queue, key: key, serial: serial))] }
        return [.ask(NextItem(queue: queue, serial: serial))]
    }

    private mutating func calibrate(_ queue: String, scorer: String?) -> [PanelEffect] {
        if view != .calibration { calibrationFrom = view }
        if calibration?.queue != queue { calibration = nil }
        view = .calibration
        error = nil
        let request = Calibrate(queue: queue, scorer: scorer)
        calibrating = request
        return [.ask(request)]
    }

    /// The label a rubric key stands for, on the item on show.
    private mutating func label(_ key: String) -> [PanelEffect] {
        guard let queue = openQueue, let item, let rubric = opened?.queue.rubric else { return [] }
        guard let verdict = rubric.verdict(forKey: key) else { return [] }
        return [
            .ask(
                LabelItem(
                    queue: queue, key: item.key, criterion: verdict.criterion.name, value: verdict.value.description,
                    serial: nextSerial()))
        ]
    }

    /// The item `delta` places from the one on show, among the annotator's.
    private mutating func step(by delta: Int) -> [PanelEffect] {
        guard let queue = openQueue, let opened, !opened.keys.isEmpty else { return [] }
        let target: Int
        if let index = opened.index {
            target = index + delta
            guard opened.keys.indices.contains(target) else {
                return [.status(delta < 0 ? "this is the first item" : "this is the last item", .info)]
            }
        } else {
            target = delta < 0 ? opened.keys.count - 1 : 0
        }
        return [.ask(OpenItem(queue: queue, key: opened.keys[target], serial: nextSerial()))]
    }

    /// The `dataset add` line that keeps the item under review as an item of `kept-QUEUE.jsonl`
    /// (beside where the TUI runs): an answer with your note as its expected output when you wrote
    /// one (`--expected-note`), else its first target to edit; a step, a trace or a session with
    /// its own.
    private func keep() -> [PanelEffect] {
        guard let opened, let item = opened.item else { return [] }
        let queue = opened.queue.name
        let stem = String(queue.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" }.prefix(40))
        let from: String
        var expected: String?
        if let step = item.step {
            from = "step:\(step.traceID)/\(step.span.spanID)"
        } else if let session = item.session {
            from = "session:" + session.id
        } else if let row = item.answer {
            from = "answer:\(row.result.runID)/\(row.result.itemID)/\(row.result.epoch)"
            expected = row.targets.first.map { $0.replacingOccurrences(of: "\n", with: " ") } ?? ""
        } else if item.pair == nil, item.session == nil, item.hit == nil, let trace = item.trace {
            from = "trace:\(trace.id)"
        } else {
            return [.status("d keeps an answer, a step, a trace or a session as a dataset item", .info)]
        }
        var line = "dataset add kept-\(stem).jsonl --from " + EvalsPanel.quote(from)
        let notes = Set(opened.queue.rubric.criteria.filter { $0.kind == .text }.map(\.name))
        if item.answer != nil,
            item.labels.contains(where: { $0.annotator == opened.annotator && notes.contains($0.criterion) })
        {
            line += " --expected-note " + EvalsPanel.quote(queue) + " --as " + EvalsPanel.quote(opened.annotator)
        } else if let expected {
            line += " --expected " + EvalsPanel.quote(expected)
        }
        return [.editCommand(line)]
    }
}
