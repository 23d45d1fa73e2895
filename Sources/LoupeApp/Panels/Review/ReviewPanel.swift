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

    /// The view on show; each keeps its state while another is on show (esc comes back to it).
    package private(set) var view = View.queues
    package private(set) var queuesView = QueuesView()
    package private(set) var itemView = ItemView()
    package private(set) var calibrationView = CalibrationView()
    package private(set) var error: String?

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
    package var capturesText: Bool { itemView.editingNote }
    package var canGoBack: Bool { view != .queues }
    package var isSearchable: Bool { view == .queues }

    package mutating func shown() -> [PanelEffect] {
        // Labels made with `:review label` or by another annotator show when the tab is chosen.
        var effects: [PanelEffect] = [.ask(ListQueues())]
        if view == .item, let refresh = itemView.refresh() { effects.append(refresh) }
        return effects
    }

    package var selectionText: String? {
        switch view {
        case .queues: return selectedListing.map { UntrustedText.sanitized($0.queue.name) }
        case .item: return itemView.selectionText
        case .calibration: return calibrationView.selectionText
        }
    }

    // MARK: - Data

    /// The queues as last read; nil until the first read.
    package var overview: ReviewBrowser.Overview? { queuesView.overview }
    package var queueList: ListState { queuesView.list }
    package var selectedListing: ReviewBrowser.Listing? { queuesView.selectedListing }
    /// The queue the item view shows (set before its first item arrives).
    package var openQueue: String? { itemView.openQueue }
    package var opened: ReviewBrowser.Opened? { itemView.opened }
    /// The item on show.
    package var item: ReviewService.Item? { itemView.item }
    package var contextOffset: Int { itemView.contextOffset }
    package var noteInput: LineEditor { itemView.noteInput }
    package var editingNote: Bool { itemView.editingNote }
    /// The rubric's first text criterion: what `n` writes.
    package var noteCriterion: Rubric.Criterion? { itemView.noteCriterion }
    /// The view the item view was opened from (the queues, or a calibration's disagreement), for esc.
    package var itemFrom: View { itemView.from }
    package var calibration: ReviewBrowser.Calibration? { calibrationView.calibration }
    package var disagreementList: ListState { calibrationView.disagreementList }
    package var reportOffset: Int { calibrationView.reportOffset }

    // MARK: - Messages

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer): return receive(answer)
        case .jobFinished, .workspaceChanged:
            // A `:review` command, or another annotator, may have labelled: read again, but never
            // over an item read still under way.
            var effects: [PanelEffect] = [.ask(ListQueues())]
            if view == .item, let refresh = itemView.refresh() { effects.append(refresh) }
            return effects
        case .input, .tick, .jobProgress, .terminate, .fileWritten, .edited, .readFinished, .navigate, .listening,
            .unreachable:
            return []
        }
    }

    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, load) = answer.matching(ListQueues.self) {
            switch load {
            case .loaded(let loaded):
                queuesView.accept(loaded)
                if view == .queues { error = nil }
            case .failed(let message):
                queuesView.acceptFailure()
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
        } else if let (asked, load) = answer.matching(Calibrate.self), calibrationView.accept(load, asked: asked) {
            switch load {
            case .loaded: error = nil
            case .failed(let message): error = message
            }
        }
        return []
    }

    /// An item answer: shown when it is the newest asked; what a write did is said either way.
    private mutating func show(_ load: Load<ReviewBrowser.Opened>, queue: String, serial asked: Int) -> [PanelEffect] {
        guard queue == itemView.openQueue else { return [] }
        switch load {
        case .failed(let message):
            itemView.failed(serial: asked)
            error = message
            return [.status("✗ " + message, .error)]
        case .loaded(let answer):
            // The queue list's figures follow every answer, without reading it again.
            queuesView.follow(answer)
            let said = ItemView.status(answer)
            let shown = itemView.show(answer, serial: asked)
            if shown { error = nil }
            // Steps that could not be read are said when the item comes on show (what a write did
            // comes first; the context says it too).
            if shown, said == nil, let problem = answer.stepsProblem {
                return [.status("⚠ " + UntrustedText.sanitized(problem), .warn)]
            }
            return said.map { [.status($0.text, $0.level)] } ?? []
        }
    }

    // MARK: - Keys

    package mutating func handleText(_ key: Key) -> [PanelEffect] { itemView.handleText(key) }

    package mutating func goBack() {
        itemView.stopEditing()
        switch view {
        case .item: view = itemView.from == .calibration && calibration != nil ? .calibration : .queues
        case .calibration: view = calibrationView.from == .item && opened != nil ? .item : .queues
        case .queues: break
        }
        if view == .queues { error = nil }
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        guard view == .queues else { return false }
        return queuesView.search(query, forward: forward, includeCurrent: includeCurrent)
    }

    /// Shared keys go to the view on show; `enter` on a queue or a disagreement opens an item,
    /// which the panel does, as it changes the view on show.
    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        if case .specific(let own) = action {
            // A rubric key labels only the item on show (the keymap binds them only there).
            if let label = own.matching(Label.self) { return view == .item ? itemView.label(label.key) : [] }
            return perform(own.action(as: Action.self), area: area)
        }
        switch view {
        case .queues:
            guard let listing = queuesView.perform(action, area: area) else { return [] }
            return openSelected(listing)
        case .item:
            return itemView.perform(action, area: area)
        case .calibration:
            guard let key = calibrationView.perform(action, area: area), let queue = calibrationView.queue else {
                return []
            }
            // The item is opened on top of the calibration: esc comes back to it, and from it to
            // the queues (never round again to an item the calibration was opened from).
            calibrationView.from = .queues
            return open(queue, key: key, from: .calibration)
        }
    }

    /// The panel's own keys, handed to the view on show; reload, back and calibrate are the
    /// panel's, as they read or change more than one view.
    private mutating func perform(_ action: Action, area: Rect) -> [PanelEffect] {
        switch action {
        case .reload:
            var effects: [PanelEffect] = [.ask(ListQueues())]
            if view == .item, let reload = itemView.reload() {
                effects.append(reload)
            } else if view == .calibration, let calibration {
                effects += calibrate(calibration.queue, scorer: calibration.scorer)
            }
            return effects
        case .back:
            goBack()
            return []
        case .calibrate:
            let queue: String?
            switch view {
            case .queues: queue = selectedListing?.queue.name
            case .item: queue = openQueue
            case .calibration: queue = calibrationView.queue
            }
            guard let queue else { return [] }
            return calibrate(queue, scorer: calibration?.queue == queue ? calibration?.scorer : nil)
        case .note, .skip, .undo, .previous, .next, .page, .trace, .keep:
            switch view {
            case .queues:
                // An item's keys: the queue list has no item on show.
                return []
            case .item:
                return itemView.perform(action, area: area)
            case .calibration:
                guard let request = calibrationView.perform(action) else { return [] }
                return calibrate(request.queue, scorer: request.scorer)
            }
        }
    }

    /// The queue list's enter: the selected queue at the annotator's next item.
    private mutating func openSelected(_ listing: ReviewBrowser.Listing) -> [PanelEffect] {
        if overview?.annotatorProblem != nil {
            // Nobody to label as: ask for the name on the command line (kept for this person).
            error = nil
            return [.editCommand("review as "), .status("who is labelling? type your name and enter", .info)]
        }
        return open(listing.queue.name)
    }

    /// Opens `queue` at the annotator's next item, or at `key`.
    private mutating func open(_ queue: String, key: String? = nil, from origin: View = .queues) -> [PanelEffect] {
        view = .item
        error = nil
        return itemView.open(queue, key: key, from: origin)
    }

    private mutating func calibrate(_ queue: String, scorer: String?) -> [PanelEffect] {
        if view != .calibration { calibrationView.from = view }
        view = .calibration
        error = nil
        return calibrationView.ask(Calibrate(queue: queue, scorer: scorer))
    }
}
