import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI

/// PyTorch profiler (Kineto) traces, imported with `loupe profile import`: a list of profiles;
/// `enter` opens one on its breakdown (where the GPU time went, per rank, as Holistic Trace
/// Analysis defines it), `v` moves on to its kernels, its timeline (a lane per GPU stream and
/// host thread, `←/→` pan, `+/-` zoom, `[`/`]` step through the lane's kernels) and the
/// comparison with a baseline (`b` on the list marks one).
///
/// Every view analyses the same window (``AnalysisWindow``) and says which: HTA's default, the
/// last ProfilerStep left out, or every step (`a` switches). The timeline spans the window.
///
/// The timeline draws each lane's level of detail (bins stored at import) until the window is
/// narrow enough to hold at most `detailLimit` events; those are then read for the window (and a
/// window either side, for panning) and drawn one by one. A gigabyte trace opens on its timeline
/// without its events being read.
///
/// A panel of its own rather than views of the Roofline panel: the roofline places kernels by
/// intensity and rate against a machine's roofs, a profile lays them out in time by rank and
/// stream; what they share (a kernel's name) links them, not a layout.
package struct ProfilesPanel: Panel {
    package let id = PanelID.profiles
    package let title = "Profiles"

    /// What the panel shows.
    package enum View: Int, CaseIterable, Hashable, Sendable {
        case list
        case breakdown
        case kernels
        case timeline
        case compare

        var name: String {
            switch self {
            case .list: "profiles"
            case .breakdown: "breakdown"
            case .kernels: "kernels"
            case .timeline: "timeline"
            case .compare: "compare"
            }
        }
    }

    package private(set) var profiles: [ProfilerTraceRecord] = []
    /// Each listed profile's default window, once its report is kept.
    package private(set) var windows: [Int64: AnalysisWindow] = [:]
    /// Profiles whose report the list asked for because none was kept (imported by a Loupe that
    /// did not keep one, or kept in a form this one cannot read): once each, so one that cannot
    /// be analysed is not asked again and again.
    private var windowsAsked: Set<Int64> = []
    /// Whether the views keep the last ProfilerStep that HTA's default window leaves out (`a`).
    package private(set) var allSteps = false
    package private(set) var error: String?
    package var list = ListState()
    package private(set) var view = View.list
    package private(set) var opened: ProfilesBrowser.Opened?
    package private(set) var loadingID: Int64?
    /// The open profile's report: worked out in the background the first time.
    package private(set) var report: ProfileReport?
    package private(set) var reportError: String?
    /// The events of the window (or more), once read; asked for and not yet answered.
    package private(set) var detail: ProfilesBrowser.Detail?
    private var detailAsked: ClosedRange<Int64>?
    package var kernelList = ListState()
    /// The profile compared against (`b`), and the comparison once loaded.
    package private(set) var baselineID: Int64?
    package private(set) var comparison: ProfileComparison?
    package var compareList = ListState()
    /// The timeline: the lane the cursor is on, the window shown (ns), the selected event (on
    /// that lane).
    package private(set) var lane = 0
    package private(set) var window: ClosedRange<Int64> = 0...1
    package private(set) var selected: ProfilesBrowser.Event?
    /// What the selected event's `args` say of its launch, once read.
    package private(set) var selectedLaunch: String?
    private var loaded = false

    /// The most events the timeline reads for a window; wider windows draw the stored bins.
    package static let detailLimit = 200_000

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "Profiles",
            [
                KeyBinding(
                    [.character("v")], .panel(.own(Action.nextView)),
                    help: "Next view of the open profile: breakdown, kernels, timeline, compare", footer: "view"),
                KeyBinding(
                    [.character("b")], .panel(.own(Action.baseline)),
                    help: "Mark the selected or open profile as the baseline that compare measures against",
                    footer: "baseline"),
                KeyBinding([.character("+")], .panel(.own(Action.zoomIn)), help: "Timeline: zoom in", footer: "zoom"),
                KeyBinding([.character("=")], .panel(.own(Action.zoomIn)), help: "Timeline: zoom in"),
                KeyBinding([.character("-")], .panel(.own(Action.zoomOut)), help: "Timeline: zoom out"),
                KeyBinding([.character("0")], .panel(.own(Action.resetZoom)), help: "Timeline: show the whole profile"),
                KeyBinding(
                    [.character("]")], .panel(.own(Action.nextEvent)),
                    help: "Timeline: select the lane's next kernel (the view follows)", footer: "next kernel"),
                KeyBinding(
                    [.character("[")], .panel(.own(Action.previousEvent)), help: "Timeline: the lane's previous kernel"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.zoomToEvent)),
                    help: "Timeline: fit the view to the selected kernel"),
                KeyBinding(
                    [.character("a")], .panel(.own(Action.allSteps)),
                    help: "Every view: all ProfilerSteps, or HTA's default window (the last step left out)",
                    footer: "all steps"),
                KeyBinding(
                    [.character("r")], .panel(.own(Action.reload)), help: "Reload the profiles", footer: "reload"),
            ])
    }

    package var initialEffects: [PanelEffect] { [.ask(ListProfiles())] }
    package var isLoadingFirstView: Bool { !loaded && error == nil }
    package var canGoBack: Bool { view != .list }
    package mutating func goBack() { view = .list }

    package var isSearchable: Bool { view == .list || view == .kernels }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        let names: [String]
        switch view {
        case .list: names = profiles.map(\.name)
        case .kernels: names = kernels.map(\.name)
        case .breakdown, .timeline, .compare: return false
        }
        let state = view == .list ? list : kernelList
        guard
            let found = nextIndex(
                count: names.count, from: state.selected, forward: forward, includeCurrent: includeCurrent,
                where: {
                    names[$0].localizedCaseInsensitiveContains(query)
                })
        else { return false }
        if view == .list { list.selected = found } else { kernelList.selected = found }
        return true
    }

    package var selectionText: String? {
        switch view {
        case .list: return list.selected < profiles.count ? profiles[list.selected].name : nil
        case .kernels: return kernelList.selected < kernels.count ? kernels[kernelList.selected].name : nil
        case .timeline: return selected?.name
        case .breakdown, .compare: return nil
        }
    }

    /// The open profile's kernels over its ranks (rank 0's when there are several, first).
    package var kernels: [ProfileReport.Kernel] {
        guard let ranks = report?.ranks else { return [] }
        return ranks.flatMap { $0.cpuOnly ? $0.operators : $0.kernels }
    }

    /// The lanes of the open profile.
    package var lanes: [ProfilesBrowser.Lane] { opened?.lanes ?? [] }

    /// What the timeline spans: the open profile's window once its report is in, every event
    /// before.
    package var timelineRange: ClosedRange<Int64> {
        guard let opened else { return 0...1 }
        guard let window = report?.window, window.end > window.start else { return opened.start...opened.end }
        return window.start...window.end
    }

    /// The events read for lane `index`, when they cover the window shown.
    package func events(ofLane index: Int) -> [ProfilesBrowser.Event]? {
        guard let detail, covers(detail.window), detail.lanes.indices.contains(index) else { return nil }
        return detail.lanes[index]
    }

    /// Whether `range` holds the whole window shown.
    private func covers(_ range: ClosedRange<Int64>) -> Bool {
        range.lowerBound <= window.lowerBound && range.upperBound >= window.upperBound
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        if case .jobFinished = msg { return [.ask(ListProfiles())] }
        guard case .answered(let answer) = msg else { return [] }
        if let (_, result) = answer.matching(ListProfiles.self) {
            loaded = true
            switch result {
            case .loaded(let listing):
                profiles = listing.records
                windows = listing.windows
                error = nil
                list.selected = min(list.selected, max(0, profiles.count - 1))
                // A profile without a kept report would show its window as "—" until opened: its
                // report is worked out now, one at a time (the job's end lists them again).
                if let id = profiles.lazy.compactMap(\.id).first(where: {
                    windows[$0] == nil && !windowsAsked.contains($0)
                }) {
                    windowsAsked.insert(id)
                    return [.ask(ProfileReportRequest(id: id))]
                }
            case .failed(let message): error = message
            }
        } else if let (request, result) = answer.matching(OpenProfile.self), request.id == loadingID {
            loadingID = nil
            switch result {
            case .loaded(let value):
                opened = value
                window = value.start...value.end
                lane = 0
                selected = nil
                detail = nil
                detailAsked = nil
                report = nil
                reportError = nil
                kernelList = ListState()
                if view == .list { view = .breakdown }
                // A stored column that did not read back (the files: thread and GPU names) is
                // said in place of the usual line; the profile opens without it.
                let said: PanelEffect =
                    value.unreadable.first.map {
                        PanelEffect.status("⚠ " + UntrustedText.sanitized($0.description), .warn)
                    }
                    ?? .status(
                        "profile \(request.id): \(value.record.ranks) rank(s), \(value.record.events) events · v for kernels, timeline, compare · a all steps",
                        .ok)
                return [.ask(ProfileReportRequest(id: request.id, allSteps: allSteps)), said] + detailEffects()
            case .failed(let message):
                return [.status(message, .error)]
            }
        } else if let (request, result) = answer.matching(ProfileReportRequest.self), request.id != opened?.record.id {
            // A listed profile's window, asked for by the list.
            if case .loaded(let value) = result, !request.allSteps { windows[request.id] = value.window }
        } else if let (request, result) = answer.matching(ProfileReportRequest.self), request.id == opened?.record.id,
            request.allSteps == allSteps
        {
            switch result {
            case .loaded(let value):
                // The timeline follows the window unless it was zoomed or panned away from it.
                let following = window == timelineRange
                report = value
                if !allSteps { windows[request.id] = value.window }
                if following {
                    window = timelineRange
                    return detailEffects()
                }
            case .failed(let message):
                reportError = message
                return [.status(message, .error)]
            }
        } else if let (request, result) = answer.matching(TimelineDetail.self), request.id == opened?.record.id {
            guard request.window == detailAsked else { return [] }
            detailAsked = nil
            switch result {
            case .loaded(let value):
                detail = value
                return detailEffects()
            case .failed(let message): return [.status(message, .error)]
            }
        } else if let (request, result) = answer.matching(StepEvent.self), request.id == opened?.record.id,
            request.lane == lane
        {
            switch result {
            case .loaded(let event?): return select(event)
            case .loaded(nil):
                return [
                    .status(request.forward ? "no later event on this lane" : "no earlier event on this lane", .info)
                ]
            case .failed(let message): return [.status(message, .error)]
            }
        } else if let (request, result) = answer.matching(LaunchSummary.self), request.id == opened?.record.id,
            request.index == selected?.index
        {
            switch result {
            case .loaded(let summary): selectedLaunch = summary
            // Args that do not read back: said where the launch would be, not left out unseen.
            case .failed(let message): selectedLaunch = "⚠ " + message
            }
        } else if let (request, result) = answer.matching(CompareProfiles.self), request.allSteps == allSteps {
            switch result {
            case .loaded(let value):
                comparison = value
                compareList = ListState()
            case .failed(let message): return [.status(message, .error)]
            }
        }
        return []
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        switch action {
        case .open where view == .list:
            guard list.selected < profiles.count, let id = profiles[list.selected].id else { return [] }
            if opened?.record.id == id {
                view = .breakdown
                return []
            }
            loadingID = id
            return [.ask(OpenProfile(id: id)), .status("opening profile \(id)…", .info)]
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            switch view {
            case .list: list.navigate(action, count: profiles.count)
            case .kernels: kernelList.navigate(action, count: kernels.count)
            case .compare: compareList.navigate(action, count: comparison?.rows.count ?? 0)
            case .timeline:
                var state = ListState()
                state.selected = lane
                state.navigate(action, count: lanes.count)
                if state.selected != lane {
                    lane = state.selected
                    selected = nil
                }
            case .breakdown: break
            }
        case .left, .right:
            guard view == .timeline else { return [] }
            let span = window.upperBound - window.lowerBound
            let step = max(1, span / 4) * (action == .left ? -1 : 1)
            shift(by: step)
            return detailEffects()
        case .specific(let own): return perform(own.action(as: Action.self))
        case .open: break
        }
        return []
    }

    private mutating func perform(_ action: Action) -> [PanelEffect] {
        switch action {
        case .nextView:
            guard opened != nil else { return [.status("open a profile first (enter)", .info)] }
            let order: [View] = [.breakdown, .kernels, .timeline, .compare]
            let next = order[((order.firstIndex(of: view) ?? -1) + 1) % order.count]
            view = next
            if next == .compare { return compareEffects() }
            if next == .timeline { return detailEffects() }
        case .baseline:
            // The profile under the cursor on the list, or the one open in any other view (as `b`
            // in Evals marks the run where you are).
            let marked: (id: Int64, name: String)?
            if view == .list {
                marked =
                    list.selected < profiles.count
                    ? profiles[list.selected].id.map { ($0, profiles[list.selected].name) } : nil
            } else {
                marked = opened?.record.id.map { ($0, opened!.record.name) }
            }
            guard let marked else { return [.status("no profile to mark as the baseline here", .info)] }
            baselineID = baselineID == marked.id ? nil : marked.id
            comparison = nil
            return [
                .status(
                    baselineID == nil
                        ? "baseline cleared"
                        : "baseline: profile \(marked.id) (\(UntrustedText.sanitized(marked.name))); open another and "
                            + "v to compare", .ok)
            ]
        case .allSteps:
            return toggleAllSteps()
        case .zoomIn:
            zoom(by: 0.5)
            return detailEffects()
        case .zoomOut:
            zoom(by: 2)
            return detailEffects()
        case .resetZoom:
            window = timelineRange
            return detailEffects()
        case .nextEvent, .previousEvent:
            guard view == .timeline, let id = opened?.record.id, lane < lanes.count, lanes[lane].summary.events > 0
            else { return [] }
            return step(id: id, forward: action == .nextEvent)
        case .zoomToEvent:
            guard let selected else { return [.status("select a kernel with ] first", .info)] }
            let margin = max(1000, selected.duration / 2)
            window = (selected.start - margin)...(selected.end + margin)
            return detailEffects()
        case .reload:
            return [.ask(ListProfiles())]
        }
        return []
    }

    /// Switches every view between HTA's default window and all steps: the report (and a
    /// comparison) for the other window is asked for, and the timeline spans it once in.
    private mutating func toggleAllSteps() -> [PanelEffect] {
        allSteps.toggle()
        let status = PanelEffect.status(
            allSteps
                ? "window: every ProfilerStep (a again: HTA's default, the last left out)"
                : "window: HTA's default, the last ProfilerStep left out (a again: every step)", .info)
        guard let id = opened?.record.id else { return [status] }
        report = nil
        reportError = nil
        window = timelineRange
        comparison = nil
        kernelList = ListState()
        compareList = ListState()
        var effects: [PanelEffect] = [.ask(ProfileReportRequest(id: id, allSteps: allSteps)), status]
        if view == .compare, baselineID != nil { effects += compareEffects() }
        return effects
    }

    /// The lane's next or previous event: from the events read when they hold it, else asked.
    private mutating func step(id: Int64, forward: Bool) -> [PanelEffect] {
        if let events = detail?.lanes[lane], let covered = detail?.window {
            let found: ProfilesBrowser.Event?
            if let selected {
                found =
                    forward
                    ? events.first { ProfilesBrowser.Event.precedes(selected, $0) }
                    : events.last { ProfilesBrowser.Event.precedes($0, selected) }
            } else {
                // The first in view.
                found = events.first { $0.end >= window.lowerBound && $0.start <= window.upperBound }
            }
            // Within what was read, nothing on the lane can lie between.
            if let found, covered.contains(found.start) { return select(found) }
        }
        return [
            .ask(
                StepEvent(
                    id: id, lane: lane, from: selected, time: window.lowerBound, forward: forward || selected == nil))
        ]
    }

    /// Selects `event` on the cursor's lane, bringing it into view.
    private mutating func select(_ event: ProfilesBrowser.Event) -> [PanelEffect] {
        selected = event
        selectedLaunch = nil
        var effects: [PanelEffect] = []
        if let id = opened?.record.id, lane < lanes.count {
            effects.append(.ask(LaunchSummary(id: id, rank: lanes[lane].rank, index: event.index)))
        }
        guard !window.contains(event.start) else { return effects }
        shift(by: event.start - (window.lowerBound + (window.upperBound - window.lowerBound) / 2))
        return effects + detailEffects()
    }

    /// Asks for the window's events when it is narrow enough and they are not read yet: the
    /// window and one more either side, so panning finds them there.
    private mutating func detailEffects() -> [PanelEffect] {
        guard view == .timeline, let opened, let id = opened.record.id else { return [] }
        if let detail, covers(detail.window) { return [] }
        func estimate(_ range: ClosedRange<Int64>) -> Int {
            opened.lanes.reduce(0) { $0 + $1.summary.estimatedEvents(in: range) }
        }
        guard estimate(window) <= Self.detailLimit else { return [] }
        let span = window.upperBound - window.lowerBound
        let range = timelineRange
        let wide = max(range.lowerBound, window.lowerBound - span)...min(range.upperBound, window.upperBound + span)
        let asked = estimate(wide) <= Self.detailLimit ? wide : window
        if let detailAsked, covers(detailAsked) { return [] }
        detailAsked = asked
        return [.ask(TimelineDetail(id: id, window: asked))]
    }

    private func compareEffects() -> [PanelEffect] {
        guard let baselineID, let id = opened?.record.id else {
            return [.status("mark a baseline profile with b on the list to compare this one with it", .info)]
        }
        guard baselineID != id else { return [.status("this profile is the baseline: open another to compare", .info)] }
        if comparison?.before == profiles.first(where: { $0.id == baselineID })?.name,
            comparison?.after == opened?.record.name
        {
            return []
        }
        return [.ask(CompareProfiles(before: baselineID, after: id, allSteps: allSteps))]
    }

    private mutating func shift(by step: Int64) {
        guard opened != nil else { return }
        let range = timelineRange
        let span = window.upperBound - window.lowerBound
        let low = min(
            max(range.lowerBound, window.lowerBound + step), max(range.lowerBound, range.upperBound - span))
        window = low...(low + span)
    }

    private mutating func zoom(by factor: Double) {
        guard view == .timeline, opened != nil else { return }
        let range = timelineRange
        let span = Double(window.upperBound - window.lowerBound)
        let whole = range.upperBound - range.lowerBound
        let newSpan = Int64(min(Double(whole), max(1000, span * factor)))
        // Around the selected kernel when there is one, else the window's middle.
        let center = selected.map { $0.start + $0.duration / 2 } ?? (window.lowerBound + Int64(span / 2))
        let low = max(range.lowerBound, min(center - newSpan / 2, range.upperBound - newSpan))
        window = low...(low + newSpan)
    }
}
