import LoupeApp
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI

/// The TUI's own measurements for `loupe bench tui` and `loupe bench traces`: frames rendered
/// in-process, no terminal.
enum RenderBench {
    /// Renders the shell at `size` over every panel and overlay, `frames` times each.
    static func timings(size: Size, frames: Int) -> [(scene: String, milliseconds: [Double])] {
        let catalog = CommandCatalog.loupe(excludingTUIOnly: true)
        var state = AppState(
            size: size, theme: .builtInDefault, panels: AppState.standardPanels(),
            workspaceName: "bench.sqlite", catalog: catalog, themeNames: ["default", "light", "mono"]
        )
        let notebooks = [NotebookSummary(path: "notebooks/getting-started.md", title: "Getting started", cellCount: 9)]
        _ = state.update(.answered(PortAnswer(NotebooksPanel.ListNotebooks(), .loaded(notebooks))))
        var scenes: [(name: String, state: AppState)] = []
        for index in 0..<state.panels.count {
            _ = state.update(.input(.key(.character(Character(String(index + 1))))))
            scenes.append((state.panels[index].title, state))
        }
        var help = state
        _ = help.update(.input(.key(.character("?"))))
        scenes.append(("help overlay", help))
        var palette = state
        _ = palette.update(.input(.key(.control("p"))))
        scenes.append(("palette", palette))
        // The Attention panel at MiniLM's limit, 256 tokens: the grid and one head.
        var attention = state
        _ = attention.update(.input(.key(.character("3"))))
        let effects = attention.update(.input(.key(.enter)))
        if let asked = effects.lazy.compactMap({ $0.request(as: AttentionPanel.Analyze.self) }).first {
            _ = attention.update(.answered(PortAnswer(asked, .loaded(syntheticAnalysis(tokens: 256)))))
        }
        scenes.append(("attention grid, 256 tokens", attention))
        _ = attention.update(.input(.key(.enter)))
        scenes.append(("attention head, 256 tokens", attention))
        var durations: [(scene: String, milliseconds: [Double])] = []
        for scene in scenes {
            var times: [Double] = []
            for _ in 0..<max(1, frames) {
                var watch = Stopwatch()
                let frame = scene.state.render()
                times.append(watch.lap() * 1000)
                precondition(frame.width == size.width)
            }
            durations.append((scene.name, times))
        }
        return durations
    }

    /// Opens trace `id` in the Traces panel as the TUI does (its port's answers played
    /// in-process) and steps through it; the open-to-first-frame time and each step's, in ms.
    static func replay(trace id: Int64, browser: TracesBrowser, steps: Int) throws -> (open: Double, steps: [Double]) {
        let first = openFirstTrace(browser: browser)
        var state = first.state
        let (ports, open) = (first.ports, first.milliseconds)
        func settle(_ effects: [Effect]) { state.settle(effects, ports: ports) }
        guard let panel = state.panels.first as? TracesPanel, panel.trace?.summary.id == id else {
            let reason = (state.panels.first as? TracesPanel)?.error ?? "it is not in the list"
            throw CommandFailure("trace \(id) did not open in the Traces panel: \(reason)")
        }
        // A step is timed until its content is on screen: at once when it was read ahead, else
        // once it is read. The read-ahead of the next one runs after, as the runtime runs it in
        // the background.
        var times: [Double] = []
        for _ in 0..<steps {
            // From the last step back to the first: a short trace is stepped through many times.
            let panel = state.panels.first as? TracesPanel
            let atEnd = panel.map { $0.step >= ($0.trace?.steps.count ?? 0) - 1 } ?? false
            var clock = Stopwatch()
            var effects = state.update(.input(.key(.character(atEnd ? "g" : "l"))))
            if (state.panels.first as? TracesPanel)?.detail == nil {
                settle(effects)
                effects = []
            }
            _ = state.render()
            times.append(clock.lap() * 1000)
            settle(effects)
        }
        return (open, times)
    }

    /// Trace `id` opened in the Traces panel at 160×48 (its port's reads in-process) on its first
    /// step, a local model's call, then `T` as a user presses it: the milliseconds from `T` to the
    /// token view's first frame (the span's stored tokens decoded, shaded, the uncertain ones
    /// marked, the cursor's alternatives drawn), from `enter` to that same frame (the trace opened
    /// and the step's content read from the workspace first), and how many tokens the view shows.
    static func tokenView(trace id: Int64, browser: TracesBrowser) throws -> (
        open: Double, fromTrace: Double, tokens: Int
    ) {
        let first = openFirstTrace(browser: browser)
        var state = first.state
        let (ports, read) = (first.ports, first.milliseconds)
        func settle(_ effects: [Effect]) { state.settle(effects, ports: ports) }
        guard let opened = state.panels.first as? TracesPanel, opened.trace?.summary.id == id, opened.detail != nil
        else {
            throw CommandFailure("trace \(id) did not open on a read step in the Traces panel")
        }
        var clock = Stopwatch()
        settle(state.update(.input(.key(.character("T")))))
        let frame = state.render()
        let open = clock.lap() * 1000
        guard let panel = state.panels.first as? TracesPanel, let view = panel.traceView?.tokenView,
            frame.text().contains("\(view.tokens.count) tokens")
        else {
            let reason = (state.panels.first as? TracesPanel)?.error ?? "no token view on screen"
            throw CommandFailure("T did not open trace \(id)'s tokens: \(reason)")
        }
        return (open, read + open, view.tokens.count)
    }

    /// The Traces panel alone at 160×48, its port's answers played in-process and the trace list
    /// read, then `enter` pressed on the first trace as a user presses it: the state, the ports,
    /// and the milliseconds from `enter` to the opened trace's first frame.
    private static func openFirstTrace(browser: TracesBrowser) -> (state: AppState, ports: Ports, milliseconds: Double)
    {
        var state = AppState(
            size: Size(width: 160, height: 48), theme: .builtInDefault, panels: [TracesPanel()],
            workspaceName: "bench", catalog: CommandCatalog(entries: []), themeNames: [], history: [])
        var ports = Ports()
        ports.register(browser)
        state.settle([.ask(TracesPanel.ListTraces())], ports: ports)
        var clock = Stopwatch()
        let effects = state.update(.input(.key(.enter)))
        state.settle(effects, ports: ports)
        _ = state.render()
        return (state, ports, clock.lap() * 1000)
    }

    /// Profile `id` opened in the Profiles panel and shown on its timeline, at 120×36: the
    /// milliseconds from `enter` to the timeline's first frame (the port's reads run in-process;
    /// the report, a background job the timeline does not wait for, is left running); then `+`
    /// pressed until the window is narrow enough for its events to be read, and the milliseconds
    /// from that key to the frame drawn from them, with how many events it read.
    static func profileTimeline(
        profile id: Int64, browser: ProfilesBrowser
    ) throws -> (firstFrame: Double, zoomedFrame: Double?, zoomedEvents: Int) {
        var state = AppState(
            size: Size(width: 120, height: 36), theme: .builtInDefault, panels: [ProfilesPanel()],
            workspaceName: "bench", catalog: CommandCatalog(entries: []), themeNames: [], history: [])
        var ports = Ports()
        ports.register(browser)
        func settle(_ effects: [Effect]) { state.settle(effects, ports: ports) }
        settle([.ask(ProfilesPanel.ListProfiles())])
        var clock = Stopwatch()
        func answer(_ effects: [Effect]) {
            state.settle(effects, ports: ports) { $0.request(as: ProfilesPanel.ProfileReportRequest.self) == nil }
        }
        answer(state.update(.input(.key(.enter))))
        answer(state.update(.input(.key(.character("v")))))
        answer(state.update(.input(.key(.character("v")))))
        _ = state.render()
        let milliseconds = clock.lap() * 1000
        guard let panel = state.panels.first as? ProfilesPanel, panel.opened?.record.id == id, panel.view == .timeline
        else {
            throw CommandFailure("profile \(id) did not open on its timeline in the Profiles panel")
        }
        var profiles: ProfilesPanel { state.panels.first as! ProfilesPanel }
        for _ in 0..<40 where profiles.events(ofLane: 0) == nil {
            _ = clock.lap()
            answer(state.update(.input(.key(.character("+")))))
            _ = state.render()
            let zoomed = clock.lap() * 1000
            if profiles.events(ofLane: 0) != nil {
                let read = profiles.detail?.lanes.reduce(0) { $0 + $1.count } ?? 0
                return (milliseconds, zoomed, read)
            }
        }
        return (milliseconds, nil, 0)
    }

    /// A 6 × 12-head analysis of `tokens` tokens with random attention rows (fixed seed).
    static func syntheticAnalysis(tokens count: Int) -> AttentionAnalysis {
        var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        var probabilities: [Float] = []
        probabilities.reserveCapacity(72 * count * count)
        for _ in 0..<(72 * count) {
            var row = (0..<count).map { _ in Float(random.uniform()) }
            let sum = row.reduce(0, +)
            row = row.map { $0 / sum }
            probabilities += row
        }
        return AttentionAnalysis(
            text: "synthetic", tokens: (0..<count).map { "tok\($0)" }, layers: 6, heads: 12,
            probabilities: probabilities,
            lens: [0.2, 0.3, 0.4, 0.5, 0.6, 1]
        )
    }
}
