import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI

extension ProfilesPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let title: String
        if view == .list || opened == nil {
            title = "Profiles"
        } else {
            title = "Profile \(opened?.record.id ?? 0) · " + UntrustedText.sanitized(opened?.record.name ?? "")
        }
        let views = [View.breakdown, .kernels, .timeline, .compare].map { $0 == view ? "[\($0.name)]" : $0.name }
        let trailing = view == .list ? (baselineID.map { "baseline \($0)" } ?? "") : views.joined(separator: " ")
        let inner = Block(title: title, trailingTitle: trailing, focused: context.focused).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 20, inner.height > 4 else { return }
        if let error {
            frame.draw(
                UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.y), style: theme.status(.error),
                clip: inner)
            return
        }
        switch view {
        case .list: renderList(into: &frame, area: inner, theme: theme, focused: context.focused)
        case .breakdown: renderBreakdown(into: &frame, area: inner, theme: theme)
        case .kernels: renderKernels(into: &frame, area: inner, theme: theme, focused: context.focused)
        case .timeline: renderTimeline(into: &frame, area: inner, theme: theme)
        case .compare: renderCompare(into: &frame, area: inner, theme: theme, focused: context.focused)
        }
    }

    static func ms(_ ns: Int64) -> String { String(format: "%.3f", Double(ns) / 1e6) }

    private func renderList(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard !profiles.isEmpty else {
            let lines = [
                "No profiles in this workspace yet.",
                "",
                "Import a PyTorch profiler (Kineto) trace, .json or .json.gz; a directory of rank files is one profile:",
                "  :profile import trace.json.gz",
                "The breakdown, kernels, timeline and compare views then answer where the GPU time went.",
            ]
            for (row, line) in lines.enumerated() where row < area.height {
                frame.draw(
                    line, at: Point(x: area.x + 1, y: area.y + row), style: row == 0 ? theme.text : theme.dim,
                    clip: area)
            }
            return
        }
        let all = [
            TableColumn("id", width: .length(4), alignment: .trailing), TableColumn("profile", width: .fill(1)),
            TableColumn("ranks", width: .length(5), alignment: .trailing),
            TableColumn("events", width: .length(9), alignment: .trailing),
            TableColumn("window ms", width: .length(11), alignment: .trailing), TableColumn("", width: .length(8)),
        ]
        let rows = profiles.map { p -> [String] in
            [
                "\(p.id ?? 0)", UntrustedText.sanitized(p.name), "\(p.ranks)", "\(p.events)",
                p.id.flatMap { windows[$0] }.map { Self.ms($0.span) } ?? "—",
                p.id == baselineID ? "baseline" : p.id == opened?.record.id ? "open" : "",
            ]
        }
        let shown = TableColumn.fitting(all, in: area.width, dropping: [3, 5, 2], fillMinimum: 16)
        var state = list
        TableView(columns: shown.map { all[$0] }, rows: rows.map { row in shown.map { row[$0] } }, focused: focused)
            .render(
                into: &frame, area: Rect(x: area.x, y: area.y, width: area.width, height: area.height - 1),
                state: &state, theme: theme)
        frame.draw(
            "window ms: GPU span of the analysis window (HTA's default) · enter opens · b baseline · "
                + ":profile import FILE",
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }

    /// A bar of `fraction` of `width` cells.
    private static func bar(_ fraction: Double, width: Int) -> String {
        let eighths = Int((max(0, min(1, fraction)) * Double(width * 8)).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8]
        return (String(repeating: "█", count: eighths / 8) + partial).padding(
            toLength: width, withPad: " ", startingAt: 0)
    }

    /// What the breakdown and kernels views say while the report is worked out.
    private func renderAnalysing(into frame: inout Frame, area: Rect, theme: Theme) {
        let text =
            reportError.map { "cannot analyse this profile: \(UntrustedText.sanitized($0))" }
            ?? "analysing \(opened?.record.events ?? 0) events… (the first time only: the report is kept; the timeline is ready, v)"
        frame.draw(text, at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
    }

    private func renderBreakdown(into frame: inout Frame, area: Rect, theme: Theme) {
        guard let report else { return renderAnalysing(into: &frame, area: area, theme: theme) }
        var y = area.y
        func line(_ spans: [Span]) {
            guard y < area.maxY else { return }
            _ = frame.draw(spans, at: Point(x: area.x + 1, y: y), clip: area)
            y += 1
        }
        let barWidth = max(6, min(40, area.width - 52))
        func shares(_ title: String, _ shares: [ProfileReport.Share], limit: Int, style: (String) -> Style) {
            line([Span(title, theme.title)])
            for share in shares.prefix(limit) {
                line([
                    Span("  " + TextWidth.fit(share.label, toColumns: 28, alignment: .leading) + " ", theme.text),
                    Span(Self.bar(share.percent / 100, width: barWidth), style(share.label)),
                    Span(String(format: " %5.1f%%  %@ ms", share.percent, Self.ms(share.nanoseconds)), theme.dim),
                ])
            }
        }
        line(windowLine(report.window, theme: theme))
        for rank in report.ranks {
            if y >= area.maxY { break }
            y += 1
            if rank.cpuOnly {
                line([Span("rank \(rank.rank): no GPU events, a CPU-only trace: v shows its operators", theme.text)])
                continue
            }
            line([
                Span("rank \(rank.rank)", theme.title), Span(" · GPU span \(Self.ms(rank.spanNs)) ms", theme.text),
                Span(
                    rank.communicationOverlap.map {
                        String(format: " · computation overlapped %.1f%% of communication", $0)
                    } ?? "",
                    theme.dim),
            ])
            shares("  time (of the GPU span)", rank.temporal, limit: 3) { label in
                label == "idle"
                    ? self.idleStyle(theme) : label == "compute" ? self.familyStyle(.gemm, theme) : theme.accent
            }
            shares("  kernel types (at once, of the time any ran)", rank.kernelTypes, limit: 4) { label in
                label.contains("communication")
                    ? self.familyStyle(.communication, theme) : self.familyStyle(.gemm, theme)
            }
            shares(
                "  families (of \(Self.ms(rank.kernelNs)) ms summed kernel time, overlapping kernels each count)",
                rank.families, limit: 6
            ) { label in
                self.familyStyle(KernelFamily.allCases.first { $0.label == label } ?? .other, theme)
            }
            let l = rank.launches
            if l.pairs > 0 {
                // HTA's launch_delay: from the launch call's end, not its start, to the GPU work's
                // start; the call's own time is HTA's cpu_duration, said apart.
                line([
                    Span("  launch delay ", theme.title), Span("(call end → GPU start, as HTA) ", theme.dim),
                    Span(
                        String(
                            format: "%d launches: mean %.1f µs, p50 %.1f µs, p99 %.1f µs · the call itself %.1f µs",
                            l.pairs, l.meanDelayNs / 1e3, l.p50DelayNs / 1e3, l.p99DelayNs / 1e3, l.meanCallNs / 1e3),
                        theme.text),
                ])
            }
            let idle = rank.idle.filter { $0.hostWaitNs + $0.kernelWaitNs + $0.otherNs > 0 }
            if !idle.isEmpty {
                line([Span("  idle by stream ", theme.title), Span("host wait · kernel wait · other (ms)", theme.dim)])
                for stream in idle.prefix(4) {
                    line([
                        Span(
                            "    stream \(stream.stream): \(Self.ms(stream.hostWaitNs)) · \(Self.ms(stream.kernelWaitNs)) · \(Self.ms(stream.otherNs))",
                            theme.text)
                    ])
                }
            }
        }
    }

    private func renderKernels(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        let kernels = self.kernels
        guard let report else { return renderAnalysing(into: &frame, area: area, theme: theme) }
        guard !kernels.isEmpty else {
            frame.draw("no kernels", at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        // Rank 0's kernels, then rank 1's…: a rank column says whose once there are several.
        let ranks = report.ranks.flatMap { rank in
            Array(repeating: rank.rank, count: rank.cpuOnly ? rank.operators.count : rank.kernels.count)
        }
        let all = [
            TableColumn("total ms", width: .length(9), alignment: .trailing),
            TableColumn("%", width: .length(5), alignment: .trailing),
            TableColumn("count", width: .length(6), alignment: .trailing),
            TableColumn("mean µs", width: .length(9), alignment: .trailing),
            TableColumn("p50 µs", width: .length(9), alignment: .trailing),
            TableColumn("p99 µs", width: .length(9), alignment: .trailing),
            TableColumn("family", width: .length(13)),
            TableColumn("rank", width: .length(4), alignment: .trailing),
            TableColumn(kernels[0].type == "cpu_op" ? "operator" : "kernel", width: .fill(1)),
        ]
        let rows = zip(kernels, ranks).map { k, rank -> [String] in
            [
                Self.ms(k.totalNs), String(format: "%.1f", k.percent), "\(k.count)",
                String(format: "%.1f", k.meanNs / 1e3),
                String(format: "%.1f", k.p50Ns / 1e3), String(format: "%.1f", k.p99Ns / 1e3), k.family, "\(rank)",
                UntrustedText.sanitized(k.name),
            ]
        }
        // The rank column only when there are several; then it outlasts the p99, since a row's %
        // is of its own rank's kernel time and reads wrong without it.
        let offered = all.indices.filter { $0 != 7 || report.ranks.count > 1 }
        let shown = TableColumn.fitting(
            offered.map { all[$0] }, in: area.width, dropping: [4, 3, 5, 7, 1, 6].compactMap(offered.firstIndex),
            fillMinimum: 24
        ).map { offered[$0] }
        let denominator =
            report.ranks.contains(where: \.cpuOnly)
            ? "% of the ProfilerSteps' time (operators, inclusive)"
            : "% of summed kernel time (overlaps each count): "
                + report.ranks.map { "rank \($0.rank) \(Self.ms($0.kernelNs)) ms" }.joined(separator: ", ")
        _ = frame.draw(windowLine(report.window, theme: theme), at: Point(x: area.x + 1, y: area.y), clip: area)
        frame.draw(denominator, at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
        var state = kernelList
        TableView(columns: shown.map { all[$0] }, rows: rows.map { row in shown.map { row[$0] } }, focused: focused)
            .render(
                into: &frame, area: Rect(x: area.x, y: area.y + 2, width: area.width, height: area.height - 4),
                state: &state, theme: theme)
        if kernelList.selected < kernels.count {
            let k = kernels[kernelList.selected]
            frame.draw(
                UntrustedText.sanitized(k.name), at: Point(x: area.x + 1, y: area.maxY - 2), style: theme.text,
                clip: area)
            frame.draw(
                "\(Self.kind(type: k.type, family: k.family)) · \(k.count) launches · min \(String(format: "%.1f", Double(k.minNs) / 1e3)) µs · max \(String(format: "%.1f", Double(k.maxNs) / 1e3)) µs",
                at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
        }
    }

    /// A kernel's HTA type and Loupe family, said once where they are the same word (an NCCL
    /// kernel read "communication · communication").
    static func kind(type: String, family: String) -> String {
        type.caseInsensitiveCompare(family) == .orderedSame ? type : "\(type) · \(family)"
    }

    /// The window the views analyse, and the key that switches it.
    func windowLine(_ window: AnalysisWindow, theme: Theme) -> [Span] {
        [
            Span(window.description, theme.text),
            Span(window.steps >= 2 ? (allSteps ? " (a: HTA's default)" : " (a: all steps)") : "", theme.dim),
        ]
    }

    /// Idle time: the border's colour, apart from every family's.
    package func idleStyle(_ theme: Theme) -> Style {
        theme.isMonochrome ? Style(attributes: .dim) : Style(foreground: theme.color(.border))
    }

    /// A kernel family's colour: the theme's `profile.*` roles, nine colours kept apart so that
    /// neighbours on a lane (GEMM and sync, normalisation and copies) are told apart.
    package func familyStyle(_ family: KernelFamily, _ theme: Theme) -> Style {
        if theme.isMonochrome { return family == .other ? Style(attributes: .dim) : Style() }
        guard let role = Self.familyRole(family) else { return Style(foreground: theme.color(.textDim)) }
        return Style(foreground: theme.color(role))
    }

    /// The theme role that colours `family`; nil for `other`, drawn dim.
    package static func familyRole(_ family: KernelFamily) -> ThemeRole? {
        switch family {
        case .gemm: .profileGEMM
        case .convolution: .profileConvolution
        case .attention: .profileAttention
        case .normalization: .profileNormalization
        case .reduction: .profileReduction
        case .elementwise: .profileElementwise
        case .communication: .profileCommunication
        case .memory: .profileMemory
        case .sync: .profileSync
        case .other: nil
        }
    }

    private func renderTimeline(into frame: inout Frame, area: Rect, theme: Theme) {
        guard let opened, !lanes.isEmpty else {
            frame.draw("no events to lay out", at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        // As wide as the longest lane's name, up to a fifth of the screen (at least 18 columns).
        let labelWidth = min(
            lanes.map { TextWidth.of("r\($0.rank) " + Self.laneName($0.label)) }.max() ?? 18,
            max(18, area.width / 5))
        let plot = Rect(
            x: area.x + labelWidth + 1, y: area.y + 1, width: area.width - labelWidth - 2, height: area.height - 5)
        guard plot.width > 4, plot.height > 0 else { return }
        let t0 = window.lowerBound
        let span = max(1, window.upperBound - window.lowerBound)
        // The axis: the view's start, middle and end from the analysis window's start.
        let origin = timelineRange.lowerBound
        func at(_ t: Int64) -> String { String(format: "%.3f ms", Double(t - origin) / 1e6) }
        if let report {
            _ = frame.draw(
                windowLine(report.window, theme: theme) + [Span(" · axis from its start", theme.dim)],
                at: Point(x: area.x + 1, y: plot.maxY), clip: area)
        } else {
            frame.draw(
                "window: every event until the analysis is in (it picks the steps, as HTA does)",
                at: Point(x: area.x + 1, y: plot.maxY), style: theme.dim, clip: area)
        }
        frame.draw(at(t0), at: Point(x: plot.x, y: area.y), style: theme.dim, clip: area)
        let middle = at(t0 + span / 2)
        frame.draw(
            middle, at: Point(x: plot.x + plot.width / 2 - middle.count / 2, y: area.y), style: theme.dim, clip: area)
        let last = at(t0 + span)
        frame.draw(last, at: Point(x: plot.maxX - last.count, y: area.y), style: theme.dim, clip: area)
        // The lanes in view, the cursor's kept on screen.
        let first = max(0, min(lane - plot.height / 2, lanes.count - plot.height))
        let ramp = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        for row in 0..<min(plot.height, lanes.count - first) {
            let index = first + row
            let l = lanes[index]
            let y = plot.y + row
            let label = TextWidth.fit(
                Self.laneLabel(rank: l.rank, label: l.label, columns: labelWidth), toColumns: labelWidth,
                alignment: .leading)
            frame.draw(
                label, at: Point(x: area.x + 1, y: y), style: index == lane ? theme.selection : theme.text, clip: area)
            var covered = [Int64](repeating: 0, count: plot.width)
            var dominant = [Int](repeating: -1, count: plot.width)
            var best = [Int64](repeating: 0, count: plot.width)
            func add(from a: Int64, to b: Int64, instant: Bool, key: Int, busy: Double = 1) {
                var column = Int((a - t0) * Int64(plot.width) / span)
                while column < plot.width {
                    let cellStart = t0 + span * Int64(column) / Int64(plot.width)
                    let cellEnd = t0 + span * Int64(column + 1) / Int64(plot.width)
                    let part = Int64(Double(max(instant ? 1 : 0, min(b, cellEnd) - max(a, cellStart))) * busy)
                    covered[column] += part
                    if part > best[column] || (part > 0 && dominant[column] < 0) {
                        best[column] = part
                        dominant[column] = key
                    }
                    if b <= cellEnd { break }
                    column += 1
                }
            }
            if let events = events(ofLane: index) {
                // The events that reach into the window: those starting before it that run
                // on into it, then those starting inside it.
                var low = 0
                var high = events.count
                while low < high {
                    let mid = (low + high) / 2
                    if events[mid].start < t0 { low = mid + 1 } else { high = mid }
                }
                for e in events[..<low] where e.end > t0 {
                    add(from: t0, to: min(e.end, t0 + span), instant: false, key: Self.key(e))
                }
                var i = low
                while i < events.count, events[i].start < t0 + span {
                    let e = events[i]
                    i += 1
                    let a = max(e.start, t0)
                    let b = min(e.end, t0 + span)
                    guard b > a || e.duration == 0 else { continue }
                    add(from: a, to: b, instant: e.duration == 0, key: Self.key(e))
                }
            } else {
                // The lane's stored bins, each spread over the columns it covers.
                let summary = l.summary
                let width = summary.binWidth
                for bin in summary.binRange(window) where !summary.bins[bin].isEmpty {
                    let a = max(t0, summary.start + Int64(Double(bin) * width))
                    let b = min(t0 + span, summary.start + Int64(Double(bin + 1) * width))
                    guard b > a else { continue }
                    add(
                        from: a, to: b, instant: false, key: Int(summary.bins[bin].shade),
                        busy: max(1 / 65535, Double(summary.bins[bin].busy) / 65535))
                }
            }
            let cell = Double(span) / Double(plot.width)
            for column in 0..<plot.width where dominant[column] >= 0 {
                let fraction = min(1, Double(covered[column]) / cell)
                let glyph = ramp[max(0, min(7, Int((fraction * 8).rounded(.up)) - 1))]
                let key = dominant[column]
                let style: Style =
                    key < 100
                    ? familyStyle(KernelFamily(rawValue: key) ?? .other, theme)
                    : (key - 100 == Int(ProfileEventKind.runtime.rawValue) ? theme.text : theme.dim)
                frame.draw(glyph, at: Point(x: plot.x + column, y: y), style: style, clip: plot)
            }
            // Kernel names on the slices wide enough to hold a few letters of them, as Perfetto
            // writes them: a GPU lane's events run one after another, so names never overlap.
            if l.isGPU {
                for slice in Self.nameSlices(events(ofLane: index) ?? l.long, from: t0, span: span, columns: plot.width)
                {
                    let style =
                        theme.isMonochrome
                        ? Style(attributes: .reverse)
                        : Style(
                            foreground: theme.color(.background) ?? RGB(0, 0, 0),
                            background: familyStyle(slice.family, theme).foreground)
                    frame.draw(slice.text, at: Point(x: plot.x + slice.column, y: y), style: style, clip: plot)
                }
            }
            // The selected kernel, marked on its lane.
            if index == lane, let selected {
                let a = Int((max(selected.start, t0) - t0) * Int64(plot.width) / span)
                let b = Int((min(selected.end, t0 + span) - t0) * Int64(plot.width) / span)
                if selected.end >= t0, selected.start <= t0 + span {
                    let columns = max(0, a)...min(plot.width - 1, max(a, b))
                    if columns.count >= 4 {
                        // Wide enough for its name: the name on the selection's colour.
                        let name = TextWidth.truncate(
                            UntrustedText.sanitized(Self.sliceName(selected.name)), toColumns: columns.count - 1)
                        frame.draw(
                            TextWidth.fit(name, toColumns: columns.count),
                            at: Point(x: plot.x + columns.lowerBound, y: y),
                            style: theme.selection, clip: plot)
                    } else {
                        for column in columns {
                            frame.draw("█", at: Point(x: plot.x + column, y: y), style: theme.selection, clip: plot)
                        }
                    }
                }
            }
        }
        // The selected kernel's details, and the legend.
        var y = area.maxY - 3
        if let selected {
            frame.draw(
                TextWidth.truncate(UntrustedText.sanitized(selected.name), toColumns: area.width - 2),
                at: Point(x: area.x + 1, y: y), style: theme.text, clip: area)
            y += 1
            // The launch (grid, block, registers) before where the event is, which the lane and
            // cursor already show: what a narrow screen cuts is the least needed.
            frame.draw(
                "starts \(at(selected.start)) · lasts \(String(format: "%.1f", Double(selected.duration) / 1e3)) µs · "
                    + "\(selected.family?.label ?? selected.kind.label)"
                    + (selectedLaunch.map { " · " + UntrustedText.sanitized($0) } ?? "")
                    + " · r\(lanes[lane].rank) \(Self.laneName(lanes[lane].label)) · event \(selected.index)",
                at: Point(x: area.x + 1, y: y), style: theme.dim, clip: area)
        } else {
            frame.draw(
                "] selects the lane's next kernel · ←/→ pan · +/- zoom · 0 whole window · f fit to the kernel",
                at: Point(x: area.x + 1, y: y), style: theme.dim, clip: area)
        }
        var legend: [Span] = []
        let short: [(KernelFamily, String)] = [
            (.gemm, "GEMM"), (.convolution, "conv"), (.attention, "attention"), (.normalization, "norm"),
            (.reduction, "reduce"), (.elementwise, "elementwise"), (.communication, "comm"), (.memory, "copy"),
            (.sync, "sync"), (.other, "other"),
        ]
        for (family, label) in short {
            legend.append(Span("█", familyStyle(family, theme)))
            legend.append(Span(" \(label) ", theme.dim))
        }
        legend.append(Span("█", theme.text))
        legend.append(Span(" launch calls", theme.dim))
        _ = frame.draw(legend, at: Point(x: area.x + 1, y: area.maxY - 1), clip: area)
    }

    /// A kernel's name as a slice shows it: `at::native::vectorized_elementwise_kernel<4, …>(…)`
    /// reads `vectorized_elementwise_kernel`; the template and arguments are in the details line.
    package static func sliceName(_ name: String) -> String {
        var text = Substring(name)
        if text.hasPrefix("void ") { text = text.dropFirst(5) }
        if let cut = text.firstIndex(where: { $0 == "<" || $0 == "(" }) { text = text[..<cut] }
        if let colons = text.range(of: "::", options: .backwards) { text = text[colons.upperBound...] }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? name : trimmed
    }

    /// A lane's name as Perfetto shows a thread, its name before its number: Kineto's
    /// "thread 4037 (python3.8)" reads "python3.8 4037"; "stream 7" and other names stay. Untrusted
    /// text from the trace file, made safe to draw.
    package static func laneName(_ label: String) -> String {
        let label = UntrustedText.sanitized(label).trimmingCharacters(in: .whitespaces)
        guard label.hasPrefix("thread "), label.hasSuffix(")"), let open = label.firstIndex(of: "(") else {
            return label
        }
        let number = label[label.index(label.startIndex, offsetBy: 7)..<open].trimmingCharacters(in: .whitespaces)
        let name = label[label.index(after: open)..<label.index(before: label.endIndex)]
        guard !number.isEmpty, number.allSatisfy(\.isNumber), !name.isEmpty else { return label }
        return "\(name) \(number)"
    }

    /// "r0 python3.8 4037" in `columns`: the rank and the lane's number (a stream's or a thread's,
    /// what tells two lanes apart) stay whole, and the name before the number gives way ("r0
    /// pytho… 4037").
    package static func laneLabel(rank: Int, label: String, columns: Int) -> String {
        let name = laneName(label)
        let whole = "r\(rank) " + name
        guard TextWidth.of(whole) > columns, let space = name.lastIndex(of: " ") else { return whole }
        let number = String(name[name.index(after: space)...])
        let room = columns - TextWidth.of("r\(rank)  " + number)
        guard room >= 2 else { return whole }
        return "r\(rank) " + TextWidth.truncate(String(name[..<space]), toColumns: room) + " " + number
    }

    /// Where the names of `events` go on a lane of `columns` cells showing `span` ns from `t0`:
    /// each event at least 4 cells wide gets its name (cut with `…` to fit, a cell left
    /// between it and the next), in its family's colour.
    package static func nameSlices(
        _ events: [ProfilesBrowser.Event], from t0: Int64, span: Int64, columns: Int
    ) -> [(column: Int, text: String, family: KernelFamily)] {
        var slices: [(column: Int, text: String, family: KernelFamily)] = []
        for event in events where event.end > t0 && event.start < t0 + span {
            let first = Int((max(event.start, t0) - t0) * Int64(columns) / span)
            let last = Int((min(event.end, t0 + span) - t0) * Int64(columns) / span)
            let width = min(columns, last) - first
            guard width >= 4 else { continue }
            let text = TextWidth.truncate(UntrustedText.sanitized(sliceName(event.name)), toColumns: width - 1)
            slices.append((first, text, event.family ?? .other))
        }
        return slices
    }

    /// What colours an event: its family on a stream, `100 + kind` on the host (as the bins).
    private static func key(_ event: ProfilesBrowser.Event) -> Int {
        event.family.map(\.rawValue) ?? 100 + Int(event.kind.rawValue)
    }

    private func renderCompare(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let comparison else {
            let text =
                baselineID == nil
                ? "No baseline: esc to the list, b on a profile marks it, then open another and v to compare."
                : "comparing…"
            frame.draw(text, at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        let change =
            comparison.beforeGPUNs > 0
            ? 100 * Double(comparison.afterGPUNs - comparison.beforeGPUNs) / Double(comparison.beforeGPUNs) : 0
        _ = frame.draw(
            [
                Span("before ", theme.dim), Span(UntrustedText.sanitized(comparison.before), theme.text),
                Span(" \(Self.ms(comparison.beforeGPUNs)) ms  →  after ", theme.dim),
                Span(UntrustedText.sanitized(comparison.after), theme.text),
                Span(" \(Self.ms(comparison.afterGPUNs)) ms ", theme.dim),
                Span(String(format: "(%+.1f%%)", change), change > 0 ? theme.status(.warn) : theme.status(.ok)),
                Span(" summed kernel time", theme.dim),
            ], at: Point(x: area.x + 1, y: area.y), clip: area)
        let windows = [comparison.beforeWindow, comparison.afterWindow].map { "\($0.shortStepsLabel), \($0.spanLabel)" }
        _ = frame.draw(
            [
                Span("window: before ", theme.dim), Span(windows[0], theme.text), Span(" · after ", theme.dim),
                Span(windows[1], theme.text),
            ], at: Point(x: area.x + 1, y: area.y + 1), clip: area)
        let all = [
            TableColumn("before ms", width: .length(10), alignment: .trailing),
            TableColumn("after ms", width: .length(10), alignment: .trailing),
            TableColumn("delta ms", width: .length(10), alignment: .trailing),
            TableColumn("count", width: .length(11), alignment: .trailing), TableColumn("", width: .length(7)),
            TableColumn("kernel", width: .fill(1)),
        ]
        let rows = comparison.rows.map { r -> [String] in
            [
                Self.ms(r.beforeNs), Self.ms(r.afterNs), String(format: "%+.3f", Double(r.deltaNs) / 1e6),
                "\(r.beforeCount)→\(r.afterCount)", r.presence == "both" ? "" : r.presence == "new" ? "new" : "gone",
                UntrustedText.sanitized(r.name),
            ]
        }
        let shown = TableColumn.fitting(all, in: area.width, dropping: [3, 0, 1], fillMinimum: 20)
        var state = compareList
        TableView(columns: shown.map { all[$0] }, rows: rows.map { row in shown.map { row[$0] } }, focused: focused)
            .render(
                into: &frame, area: Rect(x: area.x, y: area.y + 2, width: area.width, height: area.height - 3),
                state: &state, theme: theme)
        let added = comparison.rows.filter { $0.presence == "new" }.count
        let removed = comparison.rows.filter { $0.presence == "removed" }.count
        frame.draw(
            "\(comparison.rows.count) kernels · \(added) new · \(removed) gone · sorted by |delta|",
            at: Point(x: area.x + 1, y: area.maxY - 1), style: theme.dim, clip: area)
    }
}
