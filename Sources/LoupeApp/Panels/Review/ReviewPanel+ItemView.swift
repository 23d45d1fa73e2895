import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

extension ReviewPanel {
    /// One item of a queue with its whole context beside the rubric: a rubric key labels it, `n`
    /// writes the note, `[` and `]` step through the annotator's items. Each request carries a
    /// serial, so that an older answer arriving late (keys pressed quickly) never replaces a newer.
    package struct ItemView: Sendable {
        /// The queue on show (set before its first item arrives).
        package private(set) var openQueue: String?
        package private(set) var opened: ReviewBrowser.Opened?
        package var contextOffset = 0
        package var noteInput = LineEditor()
        package private(set) var editingNote = false
        /// The view the item was opened from (the queues, or a calibration's disagreement), for esc.
        package private(set) var from = View.queues
        /// The newest item request made, and the newest whose answer is on show.
        private var serial = 0
        private var shownSerial = 0

        /// The item on show.
        package var item: ReviewService.Item? { opened?.item }

        /// The rubric's first text criterion: what `n` writes.
        package var noteCriterion: Rubric.Criterion? { opened?.queue.rubric.criteria.first { $0.kind == .text } }

        private mutating func nextSerial() -> Int {
            serial += 1
            return serial
        }

        /// Opens `queue` at the annotator's next item, or at `key`.
        mutating func open(_ queue: String, key: String?, from origin: View) -> [PanelEffect] {
            if openQueue != queue { opened = nil }
            openQueue = queue
            from = origin
            editingNote = false
            let serial = nextSerial()
            if let key { return [.ask(OpenItem(queue: queue, key: key, serial: serial))] }
            return [.ask(NextItem(queue: queue, serial: serial))]
        }

        /// The item on show read again (labels made elsewhere), unless a read is still under way.
        mutating func refresh() -> PanelEffect? {
            guard serial == shownSerial else { return nil }
            return reload()
        }

        /// The item on show read again.
        mutating func reload() -> PanelEffect? {
            guard let queue = openQueue, let key = item?.key else { return nil }
            return .ask(OpenItem(queue: queue, key: key, serial: nextSerial()))
        }

        mutating func stopEditing() { editingNote = false }

        /// `enter` is the next item; left and right step through the items; the rest scroll the context.
        mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
            let page = max(1, area.height / 2)
            switch action {
            case .open:
                guard let queue = openQueue else { return [] }
                return [.ask(NextItem(queue: queue, after: item?.key, serial: nextSerial()))]
            case .left, .right: return step(by: action == .left ? -1 : 1)
            case .down: contextOffset += 1
            case .up: contextOffset = max(0, contextOffset - 1)
            case .pageDown: contextOffset += page
            case .pageUp: contextOffset = max(0, contextOffset - page)
            case .top: contextOffset = 0
            case .bottom: contextOffset = Int.max / 2
            case .specific: break
            }
            return []
        }

        /// The panel's own keys as the item reads them.
        mutating func perform(_ action: Action, area: Rect) -> [PanelEffect] {
            switch action {
            case .skip:
                guard let queue = openQueue, let item else { return [] }
                return [.ask(SkipItem(queue: queue, key: item.key, serial: nextSerial()))]
            case .note:
                guard item != nil, let note = noteCriterion else {
                    return [.status("this rubric has no note (a text criterion)", .info)]
                }
                let mine = item?.labels.last { $0.annotator == opened?.annotator && $0.criterion == note.name }
                noteInput = LineEditor(mine?.value ?? "")
                noteInput.selectAll()
                editingNote = true
            case .undo:
                guard let queue = openQueue else { return [] }
                return [.ask(UndoLabel(queue: queue, key: item?.key, serial: nextSerial()))]
            case .previous, .next:
                return step(by: action == .previous ? -1 : 1)
            case .keep:
                return keep()
            case .trace:
                guard let trace = item?.record.traceID ?? item?.answer?.result.traceID else {
                    return [.status("this item links to no trace", .info)]
                }
                return [.navigate(.trace(trace))]
            case .page:
                contextOffset += max(1, area.height / 2)
            case .calibrate, .back, .reload:
                // The panel's own: they change or read more than this view.
                break
            }
            return []
        }

        /// The label a rubric key stands for, on the item on show.
        mutating func label(_ key: String) -> [PanelEffect] {
            guard let queue = openQueue, let item, let rubric = opened?.queue.rubric else { return [] }
            guard let verdict = rubric.verdict(forKey: key) else { return [] }
            return [
                .ask(
                    LabelItem(
                        queue: queue, key: item.key, criterion: verdict.criterion.name,
                        value: verdict.value.description, serial: nextSerial()))
            ]
        }

        /// The note's line editor: enter stores the note as a label, esc leaves it unstored.
        mutating func handleText(_ key: Key) -> [PanelEffect] {
            switch key {
            case .escape, .control("c"):
                editingNote = false
            case .enter:
                editingNote = false
                guard let queue = openQueue, let item, let note = noteCriterion else { return [] }
                let text = noteInput.text.trimmingWhitespace()
                guard !text.isEmpty else { return [.status("an empty note is not stored", .warn)] }
                return [
                    .ask(
                        LabelItem(queue: queue, key: item.key, criterion: note.name, value: text, serial: nextSerial()))
                ]
            default:
                noteInput.handle(key)
            }
            return []
        }

        /// Takes an item answer for the open queue: true when it is the newest asked, and so on show.
        mutating func show(_ answer: ReviewBrowser.Opened, serial asked: Int) -> Bool {
            guard asked >= shownSerial else { return false }
            shownSerial = asked
            if opened?.item?.key != answer.item?.key { contextOffset = 0 }
            opened = answer
            return true
        }

        /// A failed item answer: the read it ended is no longer under way.
        mutating func failed(serial asked: Int) { shownSerial = max(shownSerial, asked) }

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
        /// (beside where the TUI runs): an answer with your note as its expected output when you
        /// wrote one (`--expected-note`), else its first target to edit; a step, a trace or a
        /// session with its own.
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
                line +=
                    " --expected-note " + EvalsPanel.quote(queue) + " --as " + EvalsPanel.quote(opened.annotator)
            } else if let expected {
                line += " --expected " + EvalsPanel.quote(expected)
            }
            return [.editCommand(line)]
        }

        /// The answer's output (both sides of a pair), or the item's key.
        var selectionText: String? {
            guard let item = opened?.item else { return nil }
            return item.answer?.shownOutput ?? item.pair.map { "A: \($0.left.shownOutput)\nB: \($0.right.shownOutput)" }
                ?? item.key
        }

        /// What the status line says after a write.
        static func status(_ answer: ReviewBrowser.Opened) -> (text: String, level: StatusLevel)? {
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
                return (
                    UntrustedText.sanitized("↶ took back \(label.criterion)=\(label.value) on \(label.itemKey)"), .ok
                )
            case .undone(nil):
                return ("nothing of yours to undo in " + UntrustedText.sanitized(answer.queue.name), .warn)
            }
        }
    }
}
