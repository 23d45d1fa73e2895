import Foundation
import LoupeApp
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The SAE panel on a real SAE: the fixtures are `loupe sae list|features|feature|activate
/// --json` output for a TopK SAE (k 32, 3,072 latents) trained on 100,000 Cranfield tokens after
/// MiniLM's layer 3 (the features file keeps the 40 densest and feature 3027; the log every
/// tenth logged step).
@Suite struct SAEPanelTests {
    static func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sae/\(name).json")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(T.self, from: try Data(contentsOf: url))
    }

    static func listing() throws -> SAEListing { try fixture("listing", as: SAEListing.self) }

    /// The app on the SAE tab with the SAE listed and its features indexed.
    func loaded(width: Int = 120, height: Int = 36) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        let shown = AppFixtures.press([.character("7")], on: &state)
        // Nothing listed yet: the features are asked for once the SAEs are.
        #expect(shown.isEmpty)
        let listed = state.update(AppFixtures.answer(SAEPanel.ListSAEs(), [try Self.listing()]))
        // The index is read (or built, seconds) as a job: in the status bar, counted on quit.
        #expect(listed.map { $0.request(as: SAEPanel.LoadFeatures.self) } == [SAEPanel.LoadFeatures(model: 1)])
        guard case .portJob(let job, _) = try #require(listed.first) else {
            Issue.record("the features are not read as a job: \(listed)")
            return state
        }
        #expect(state.jobs.map(\.title) == ["index SAE 1's features"])
        #expect(state.render().text().contains("Reading SAE 1's feature index (built once from 100,000 tokens"))
        let features = try Self.fixture("features", as: [SAEFeatureIndex.Summary].self)
        _ = state.update(.readFinished(job, PortAnswer(SAEPanel.LoadFeatures(model: 1), .loaded(features))))
        #expect(state.jobs.isEmpty)
        return state
    }

    private func check(_ state: AppState, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectPanel(state, matchesGolden: name, sourceLocation: sourceLocation)
    }

    @Test func theFeatureListSortsByDensityMaxLabelAndNumber() throws {
        var state = try loaded()
        check(state, "sae-features-120x36")
        let text = state.render().text()
        #expect(text.contains("L0 32.0 · FVU 0.103") && text.contains("fidelity 0.9686"))
        // It opens on the strongest features that are neither dense (>10% of tokens) nor dead:
        // the fixture's 40 densest include 33 above 10%.
        let features = try Self.fixture("features", as: [SAEFeatureIndex.Summary].self)
        let kept = features.filter { $0.density > 0 && $0.density <= 0.1 || $0.label != nil }
        #expect(text.contains("\(kept.count) of 41 features (\(41 - kept.count) dense or dead hidden: H) · 1 labelled"))
        let strongest = try #require(kept.max { $0.maxActivation < $1.maxActivation })
        func firstRow() -> Substring? { state.render().text().split(separator: "\n").first { $0.contains("│▌") } }
        #expect(firstRow()?.contains(String(format: "%.3f", strongest.maxActivation)) == true)
        // H shows them all; s sorts by label (the labelled feature leads), number, density.
        AppFixtures.press([.character("H")], on: &state)
        #expect(state.render().text().contains("41 of 41 features · 1 labelled"))
        AppFixtures.press([.character("s")], on: &state)
        #expect(firstRow()?.contains("3027") == true && firstRow()?.contains("importance /") == true)
        AppFixtures.press([.character("s"), .character("s")], on: &state)
        // Densest first: 509 fires on 36.9% of tokens.
        #expect(firstRow()?.contains("509   0.36879") == true)
    }

    @Test func theCardShadesContextsAndRunsTheTestText() throws {
        var state = try loaded()
        AppFixtures.press([.character("/")], on: &state)
        AppFixtures.type("feature 3027", on: &state)
        AppFixtures.press([.enter], on: &state)
        let opened = AppFixtures.press([.enter], on: &state)
        let text = "The most important effect of the boundary layer is on drag."
        #expect(
            opened == [.ask(SAEPanel.LoadCard(model: 1, feature: 3027)), .ask(SAEPanel.Activate(model: 1, text: text))])
        _ = state.update(
            AppFixtures.answer(
                SAEPanel.LoadCard(model: 1, feature: 3027), try Self.fixture("card", as: SAEFeatureIndex.Card.self)))
        _ = state.update(
            AppFixtures.answer(
                SAEPanel.Activate(model: 1, text: text), try Self.fixture("activate", as: SAETextActivations.self)))
        check(state, "sae-card-120x36")
        let frame = state.render()
        let screen = frame.text()
        #expect(screen.contains("via MiniLM's tied word-embedding matrix"))
        #expect(screen.contains("feature 3027 peaks at 8.13 here"))
        // The firing token is shaded: "important" in the first context has a heat background.
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        let row = try #require(lines.firstIndex { $0.contains("  8.95  …") })
        let column = try #require(
            lines[row].range(of: "important").map {
                lines[row].distance(from: lines[row].startIndex, to: $0.lowerBound)
            })
        #expect(frame[column, row].style.background != nil)
        #expect(
            frame[0, row].style.background == nil
                || frame[0, row].style.background != frame[column, row].style.background)
        // e exports the card as JSON.
        let exported = AppFixtures.press([.character("e")], on: &state)
        guard case .writeFile(let path, let contents)? = exported.first else {
            Issue.record("e wrote nothing")
            return
        }
        #expect(path.hasSuffix("sae-1-feature-3027.json"))
        #expect(contents.contains("\"max_activation\"") && contents.contains("\"vocabulary\""))
    }

    @Test func aLabelIsTypedAndStored() throws {
        var state = try loaded()
        let feature = try #require((state.panels[state.focusedPanel] as? SAEPanel)?.selectedFeature?.feature)
        AppFixtures.press([.character("L")], on: &state)
        AppFixtures.press(Array(repeating: Key.backspace, count: 40), on: &state)
        AppFixtures.type("density giant", on: &state)
        let stored = AppFixtures.press([.enter], on: &state)
        #expect(stored == [.ask(SAEPanel.LabelFeature(model: 1, feature: feature, label: "density giant"))])
    }

    @Test func trainingProgressGrowsTheCurvesLive() throws {
        var state = try loaded(width: 80, height: 24)
        var listing = try Self.listing()
        listing.id = 2
        listing.step = 0
        listing.steps = 400
        listing.metrics = nil
        listing.log = []
        let points: [SAELogRow] = (1...4).map { (index: Int) -> SAELogRow in
            let n = Double(index)
            return SAELogRow(
                step: index * 10, loss: 200 / n, mse: 180 / n, l0: 32, fvu: 0.8 / n, dead: 0, dense: 0.01 * n,
                learningRate: 4e-5 * n)
        }
        // The first point of a new SAE asks for the list and follows the run.
        let first = state.update(
            .jobProgress(
                JobID(1),
                JobProgress(completed: 10, total: 400, values: SAETrainingPoint(model: 2, log: points[0]).values))
        )
        #expect(first == [.ask(SAEPanel.ListSAEs())])
        _ = state.update(AppFixtures.answer(SAEPanel.ListSAEs(), [try Self.listing(), listing]))
        for point in points.dropFirst() {
            _ = state.update(
                .jobProgress(
                    JobID(1),
                    JobProgress(
                        completed: Double(point.step), total: 400, values: SAETrainingPoint(model: 2, log: point).values
                    )))
        }
        check(state, "sae-training-80x24")
        let text = state.render().text()
        #expect(text.contains("training · step 40 of 400"))
        #expect(text.contains("0.800") && text.contains("4.0%"))
    }

    /// Another process's commit (a teammate's `sae train` on a shared workspace) lists the SAEs again.
    @Test func anotherProcesssCommitListsTheSAEsAgainAndShowsItsLabels() throws {
        var state = try loaded()
        let effects = state.update(.workspaceChanged)
        #expect(effects.contains(.ask(SAEPanel.ListSAEs())))
        #expect(effects.contains(.ask(SAEPanel.RefreshLabels(model: 1))))
        var features = try Self.fixture("features", as: [SAEFeatureIndex.Summary].self)
        features[0].label = "labelled elsewhere"
        _ = state.update(AppFixtures.answer(SAEPanel.RefreshLabels(model: 1), features))
        #expect(state.render().text().contains("labelled elsewhere"))
    }

    @Test func aListingThatFailsSaysWhy() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("7")], on: &state)
        _ = state.update(AppFixtures.failure(SAEPanel.ListSAEs(), "database is locked"))
        let text = state.render().text()
        #expect(text.contains("✗ database is locked") && text.contains("No SAE in this workspace yet"))
    }

    @Test func trainOpensTheCommandLineWithTheSAEsSettings() throws {
        var state = try loaded()
        AppFixtures.press([.character("t")], on: &state)
        #expect(state.mode == .commandLine)
        #expect(state.commandLine.text == "sae train --set 1 --width 3072 --k 32 --steps 2000")
    }

    /// The feature index is a job: `q` while it is read asks first and names it, and a job that
    /// ends while the dialog is up is not counted as "0 jobs are running".
    @Test func quittingWhileTheFeatureIndexIsReadAsksAndNamesIt() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("7")], on: &state)
        let listed = state.update(AppFixtures.answer(SAEPanel.ListSAEs(), [try Self.listing()]))
        guard case .portJob(let job, _) = try #require(listed.first) else {
            Issue.record("the features are not read as a job: \(listed)")
            return
        }
        #expect(AppFixtures.press([.character("q")], on: &state).isEmpty)
        #expect(state.mode == .confirmQuit)
        #expect(state.render().text().contains("1 job is running: index SAE 1's features."))
        _ = state.update(.readFinished(job, PortAnswer(SAEPanel.LoadFeatures(model: 1), .failed("cancelled"))))
        let text = state.render().text()
        #expect(text.contains("Nothing is running any more.") && !text.contains("0 jobs"))
        #expect(AppFixtures.press([.character("y")], on: &state) == [.cancelJobs, .quit])
    }
}
