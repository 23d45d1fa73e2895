import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

extension ReviewPanel {
    /// A queue's run's scorer against the people's labels: the report, and the items where they
    /// disagree, one `enter` away. It keeps what it showed while an item opened from it is read.
    package struct CalibrationView: Sendable {
        /// The calibration on show; nil until its first answer (or after a failed one).
        package private(set) var calibration: ReviewBrowser.Calibration?
        /// The calibration asked for and not yet answered.
        package private(set) var calibrating: Calibrate?
        package var disagreementList = ListState()
        /// How far the calibration report is scrolled (ctrl+d, ctrl+u).
        package var reportOffset = 0
        /// The view the calibration was opened from, for esc.
        var from = View.queues

        /// The queue whose calibration is on show or asked for.
        var queue: String? { calibration?.queue ?? calibrating?.queue }

        /// Lines move through the disagreements, half pages through the report; `enter` answers
        /// the key of the disagreement's item to open.
        mutating func perform(_ action: PanelAction, area: Rect) -> String? {
            switch action {
            case .open:
                guard let calibration, disagreementList.selected < calibration.disagreements.count else { return nil }
                return calibration.disagreements[disagreementList.selected].key
            case .pageDown: reportOffset += max(1, area.height / 3)
            case .pageUp: reportOffset = max(0, reportOffset - max(1, area.height / 3))
            case .up, .down, .top, .bottom:
                disagreementList.navigate(action, count: calibration?.disagreements.count ?? 0)
            case .left, .right, .specific: break
            }
            return nil
        }

        /// The panel's own keys as the calibration reads them: `s` is the next scorer, answered as
        /// the calibration to ask for.
        func perform(_ action: Action) -> Calibrate? {
            switch action {
            case .skip:
                guard let calibration, !calibration.scorers.isEmpty else { return nil }
                let index = calibration.scorers.firstIndex(of: calibration.scorer) ?? -1
                return Calibrate(
                    queue: calibration.queue, scorer: calibration.scorers[(index + 1) % calibration.scorers.count])
            case .note, .undo, .previous, .next, .page, .trace, .keep:
                // An item's keys: the calibration has no item on show.
                return nil
            case .calibrate, .back, .reload:
                // The panel's own: they change or read more than this view.
                return nil
            }
        }

        /// Asks for `request`, forgetting a calibration of another queue.
        mutating func ask(_ request: Calibrate) -> [PanelEffect] {
            if calibration?.queue != request.queue { calibration = nil }
            calibrating = request
            return [.ask(request)]
        }

        /// Takes the answer to `asked`; false when it is not the calibration last asked for.
        mutating func accept(_ load: Load<ReviewBrowser.Calibration>, asked: Calibrate) -> Bool {
            guard asked == calibrating else { return false }
            calibrating = nil
            switch load {
            case .loaded(let loaded):
                if calibration?.queue != loaded.queue || calibration?.scorer != loaded.scorer {
                    disagreementList = ListState()
                    reportOffset = 0
                }
                calibration = loaded
            case .failed:
                calibration = nil
            }
            return true
        }

        /// The selected disagreement's item key, or the report when none is selected.
        var selectionText: String? {
            guard let calibration else { return nil }
            let list = calibration.disagreements
            return disagreementList.selected < list.count
                ? list[disagreementList.selected].key : calibration.summary.joined(separator: "\n")
        }
    }
}
