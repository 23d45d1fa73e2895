import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

extension ReviewPanel {
    /// The queue list: every queue with its rubric and each annotator's progress. Its `enter`
    /// opens the selected queue; the panel carries that out, as it changes the view on show.
    package struct QueuesView: Sendable {
        /// The queues as last read; nil until the first read.
        package private(set) var overview: ReviewBrowser.Overview?
        package var list = ListState()

        /// The selected queue, when there is one.
        package var selectedListing: ReviewBrowser.Listing? {
            guard let queues = overview?.queues, list.selected < queues.count else { return nil }
            return queues[list.selected]
        }

        /// Moves the selection; `enter` answers the queue to open.
        mutating func perform(_ action: PanelAction, area: Rect) -> ReviewBrowser.Listing? {
            switch action {
            case .open: return selectedListing
            case .up, .down, .pageUp, .pageDown, .top, .bottom:
                list.navigate(action, count: overview?.queues.count ?? 0, page: max(1, area.height / 2))
            case .left, .right, .specific: break
            }
            return nil
        }

        /// Takes a fresh read of the queues, keeping the selected queue selected when it is still there.
        mutating func accept(_ loaded: ReviewBrowser.Overview) {
            let selected = selectedListing?.queue.name
            overview = loaded
            list.selected =
                loaded.queues.firstIndex { $0.queue.name == selected }
                ?? min(list.selected, max(0, loaded.queues.count - 1))
        }

        /// A failed first read still ends the loading: an empty list under the error.
        mutating func acceptFailure() {
            overview = overview ?? ReviewBrowser.Overview(queues: [], annotator: nil, annotatorProblem: nil)
        }

        /// The queue's figures as an item answer carries them, without reading the queues again.
        mutating func follow(_ answer: ReviewBrowser.Opened) {
            guard let index = overview?.queues.firstIndex(where: { $0.queue.name == answer.queue.name }) else { return }
            overview?.queues[index].progress = answer.progress
            overview?.queues[index].headToHead = answer.headToHead
            if answer.isAssigned { overview?.queues[index].yourFinished = answer.finished.count }
        }

        /// Moves the selection to the next queue whose name, rubric or source holds `query`.
        mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
            guard let queues = overview?.queues else { return false }
            let texts = queues.map { "\($0.queue.name) \($0.queue.rubric.name) \($0.queue.record.source)" }
            return list.selectNextMatch(in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
        }
    }
}
