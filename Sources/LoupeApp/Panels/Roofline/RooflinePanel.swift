import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

/// The machine's roofs with measured kernels placed under them: a log-log braille chart
/// (x = FLOP/byte, y = GFLOP/s) beside a sortable table of the kernels. `p` switches between
/// this CPU and imported GPUs, `f` the plotted precision, `s`/`S` the sort, `e` exports CSV.
package struct RooflinePanel: Panel {
    package let id = PanelID.roofline
    package let title = "Roofline"

    package private(set) var data: RooflineModel?
    /// Why the workspace could not be read (shown instead of the chart).
    package private(set) var error: String?
    package var list = ListState()
    package private(set) var profileIndex = 0
    package private(set) var precisionIndex = 0
    package private(set) var sort = TableSort(column: 2, ascending: false)
    /// The import or run (suite) the other kernels are compared with (`b`).
    package private(set) var baselineSuite: String?
    /// The runs shown alone (a trace step's forward pass, `p` in Traces); `esc` shows every kernel.
    package private(set) var focus: RooflineFocus?
    private var pending: [PanelEffect] = []

    package init() {}

    static let sortColumns = ["kernel", "shape", "ms", "GFLOP/s", "F/B", "roof", "%", "bound"]

    package var keymap: Keymap {
        Keymap(
            "Roofline",
            [
                KeyBinding(
                    [.character("p")], .panel(.own(Action.profile)),
                    help: "Next machine profile (this CPU, imported GPUs)", footer: "profile"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.precision)),
                    help: "Next precision to plot (FP32, FP64, FP16…)",
                    footer: "precision"),
                KeyBinding([.character("s")], .panel(.own(Action.sort)), help: "Sort the table by the next column"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Reverse the sort"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.export)),
                    help: "Export the points and ceilings as CSV (roofline-<profile>-<precision>.csv)", footer: "export"
                ),
                KeyBinding(
                    [.character("b")], .panel(.own(Action.baseline)),
                    help:
                        "Mark the selected kernel's import as the baseline: other runs of its kernels show the change",
                    footer: "baseline"),
                KeyBinding(
                    [.character("r")], .panel(.own(Action.reload)),
                    help: "Reload the roofs and kernels from the workspace", footer: "reload"),
            ])
    }

    package var initialEffects: [PanelEffect] { [.ask(LoadRoofline())] }

    package var canGoBack: Bool { focus != nil }

    package mutating func goBack() {
        focus = nil
        list.selected = 0
        pending = [.ask(LoadRoofline())]
    }

    package mutating func takeEffects() -> [PanelEffect] {
        defer { pending = [] }
        return pending
    }

    /// The profile on show.
    package var profile: RooflineModel.Profile? { data?.profile(at: profileIndex) }

    /// The precision plotted: the profile's first until `f` steps on, chosen as `roofline show`
    /// and the MCP tool choose it (``RooflineModel/Profile/precision(at:)``).
    package var precision: String { profile?.precision(at: precisionIndex) ?? RooflineModel.defaultPrecision }

    /// The kernels placed at the plotted precision, in table order.
    package var rows: [RooflineModel.Placement] {
        guard let profile else { return [] }
        let placements = profile.placements(precision)
        func key(_ p: RooflineModel.Placement) -> (String, Double) {
            switch sort.column {
            case 0: return (p.point.name.lowercased(), 0)
            case 1: return (p.point.shape, 0)
            case 2: return ("", p.point.seconds)
            case 3: return ("", p.gflopsPerSecond ?? -1)
            case 4: return ("", p.flopsPerByte ?? -1)
            case 5: return ("", p.attainable ?? -1)
            case 6: return ("", p.fraction ?? -1)
            default: return (p.bound ?? "~", 0)
            }
        }
        return placements.enumerated().sorted { a, b in
            let (x, y) = (key(a.element), key(b.element))
            if x == y { return a.offset < b.offset }
            return sort.ascending ? (x.0, x.1) < (y.0, y.1) : (x.0, x.1) > (y.0, y.1)
        }.map(\.element)
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .jobFinished, .workspaceChanged:
            // A command (roofline measure, kernels bench, an import, the demo build) may have added
            // roofs, here or in another process (a teammate's import into a shared workspace).
            return [.ask(LoadRoofline(focus: focus))]
        case .navigate(.roofline(let chosen)):
            // A trace step's forward pass: its operations alone, the slowest first.
            focus = chosen
            data = nil
            profileIndex = 0
            precisionIndex = 0
            sort = TableSort(column: 2, ascending: false)
            list.selected = 0
            return [.ask(LoadRoofline(focus: chosen))]
        case .answered(let answer):
            // An answer to a request made before the focus changed is not what is on show.
            guard let (asked, result) = answer.matching(LoadRoofline.self), asked.focus == focus else { return [] }
            switch result {
            case .loaded(let loaded):
                data = loaded
                error = nil
                profileIndex = min(profileIndex, max(0, loaded.profiles.count - 1))
                list.selected = min(list.selected, max(0, rows.count - 1))
                // A profile's stored value that does not read back is said, not left out silently.
                if let problem = loaded.profiles.lazy.flatMap(\.unreadable).first {
                    return [.status("⚠ " + UntrustedText.sanitized(problem.description), .warn)]
                }
            case .failed(let message):
                error = message
            }
        case .navigate, .input, .tick, .jobProgress, .terminate, .fileWritten, .edited, .readFinished, .listening,
            .unreachable:
            break
        }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        let count = rows.count
        switch action {
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            list.navigate(action, count: count)
        case .specific(let own): return perform(own.action(as: Action.self))
        case .left, .right, .open: break
        }
        return []
    }

    private mutating func perform(_ action: Action) -> [PanelEffect] {
        switch action {
        case .reload: return [.ask(LoadRoofline(focus: focus))]
        case .profile:
            guard let profiles = data?.profiles, !profiles.isEmpty else { return [] }
            profileIndex = (profileIndex + 1) % profiles.count
            precisionIndex = 0
            list.jump(toEnd: false, count: rows.count)
        case .precision:
            let precisions = profile?.precisions ?? []
            guard precisions.count > 1 else {
                return [.status("\(profile?.name ?? "this profile") has only \(precision) roofs and kernels", .info)]
            }
            precisionIndex = (precisionIndex + 1) % precisions.count
        case .sort:
            let next = (sort.column + 1) % Self.sortColumns.count
            sort = TableSort(column: next, ascending: next <= 1 || next == 7)
        case .reverse: sort.ascending.toggle()
        case .baseline:
            let rows = self.rows
            guard list.selected < rows.count, let data else { return [] }
            let suite = rows[list.selected].point.suite
            if baselineSuite == suite {
                baselineSuite = nil
                return [.status("baseline cleared", .info)]
            }
            baselineSuite = suite
            let matched = data.profiles.flatMap(\.points).filter { data.baseline(for: $0, suite: suite) != nil }.count
            return [
                .status(
                    "baseline: \(suite) (\(data.kernelCount(suite: suite)) kernels); \(matched) runs of them elsewhere show the change",
                    .ok)
            ]
        case .export:
            guard let profile else { return [] }
            return [
                .app(
                    .writeFile(
                        path: FileManager.default.currentDirectoryPath + "/" + profile.exportName(precision),
                        contents: profile.csv(precision)))
            ]
        }
        return []
    }
}
