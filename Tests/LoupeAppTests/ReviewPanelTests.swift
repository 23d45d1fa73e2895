import Foundation
import LoupeApp
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

/// The Review panel on a real workspace: the sample Inspect AI log (three arithmetic questions ×
/// two epochs scored by `match()`, one wrong answer) imported as an eval run, a queue over its
/// answers against `rubrics/answer-quality.yaml`, and the real `ReviewBrowser` answering the
/// panel's requests in the test's thread, labelling as ana.
@Suite struct ReviewPanelTests {
    let workspace: Workspace
    let service: ReviewService
    let queue: ReviewService.Queue
    /// The queue's items in order.
    let keys: [String]

    static func repository(_ relative: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../" + relative)
            .standardized.path
    }

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-review-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        workspace = try Workspace(path: directory + "/w.sqlite")
        _ = try TraceService(workspace: workspace).importFiles([
            Self.repository("sample-data/traces/inspect-arith.eval")
        ])
        let run = try #require(try workspace.evals.evalRuns().first?.id)
        service = ReviewService(workspace: workspace)
        var request = ReviewService.QueueRequest(
            name: "arith", rubricPath: Self.repository("rubrics/answer-quality.yaml"), source: "answers run:\(run)",
            createdBy: "test")
        request.seed = 7
        queue = try service.createQueue(request)
        keys = try workspace.reviews.reviewItems(queue: queue.id).map(\.itemKey)
    }

    private func ports(as annotator: String = "ana") -> Ports {
        var ports = Ports()
        ports.register(ReviewBrowser(workspace: workspace, environment: ["LOUPE_USER": annotator]))
        return ports
    }

    private func panel(_ state: AppState) -> ReviewPanel { state.panels[state.focusedPanel] as! ReviewPanel }

    /// Presses keys one at a time, answering what each asks on the real port before the next.
    private func press(_ keys: [Key], _ state: inout AppState, as annotator: String = "ana") {
        for key in keys { state.settle(state.update(.input(.key(key))), ports: ports(as: annotator)) }
    }

    private func type(_ text: String, _ state: inout AppState, as annotator: String = "ana") {
        press(text.map { Key.character($0) }, &state, as: annotator)
    }

    /// The app on the Review tab (8), its queue list read.
    private func reviewTab(width: Int = 120, height: Int = 36, as annotator: String = "ana") -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        press([.character("8")], &state, as: annotator)
        return state
    }

    /// With no name to label as (no LOUPE_USER, no USER: a container, CI), enter on a queue asks
    /// for one on the command line (`review as NAME`), and the name kept there is used from then
    /// on, without quitting (the walkthrough's Review #1).
    @Test func withNobodyToLabelAsEnterAsksForAName() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-home-\(UUID())").path
        let environment = ["HOME": home]
        var ports = Ports()
        ports.register(ReviewBrowser(workspace: workspace, environment: environment))
        var state = AppFixtures.state()
        for key in [Key.character("8"), .enter] { state.settle(state.update(.input(.key(key))), ports: ports) }
        #expect(state.mode == .commandLine && state.commandLine.text == "review as ")
        // What `:review as ana` does, then the job's end reads the queues again.
        #expect(
            try ReviewService.rememberAnnotator("ana", environment: environment) == home + "/.config/loupe/annotator")
        state.settle(state.update(.input(.key(.escape))), ports: ports)
        state.settle(state.update(.jobFinished(JobID(99), CommandOutcome(output: "labelling as ana"))), ports: ports)
        #expect(panel(state).overview?.annotator == "ana")
        state.settle(state.update(.input(.key(.enter))), ports: ports)
        #expect(panel(state).view == .item)
    }

    /// The app in the item view of the queue, at ana's first item.
    private func itemView(width: Int = 120, height: Int = 36) -> AppState {
        var state = reviewTab(width: width, height: height)
        press([.enter], &state)
        return state
    }

    private func labels(_ annotator: String = "ana") throws -> [ReviewLabelRecord] {
        try workspace.reviews.reviewLabels(queue: queue.id).filter { $0.annotator == annotator }
    }

    private func check(_ state: AppState, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectPanel(state, matchesGolden: name, sourceLocation: sourceLocation)
    }

    @Test func theQueueListShowsEachQueuesProgressAndOpensAtTheNextItem() throws {
        try service.label(queue, key: keys[0], annotator: "ben", values: [("correct", "r"), ("grounded", "g")])
        var state = reviewTab()
        #expect(state.focusedPanelID == .review)
        let text = state.render().text()
        #expect(text.contains("arith") && text.contains("answer-quality v1") && text.contains("ben 0/6"))
        #expect(text.contains("labelling as ana"))
        check(state, "review-queues-120x36")
        check(reviewTab(width: 80, height: 24), "review-queues-80x24")
        press([.enter], &state)
        #expect(panel(state).view == .item && panel(state).item?.key == keys[0])
    }

    @Test func aKeyLabelsAtOnceAsItsOwnRowWithOriginReview() throws {
        var state = itemView()
        check(state, "review-item-120x36")
        press([.character("r")], &state)
        var stored = try labels()
        #expect(stored.count == 1)
        #expect(
            stored.first.map { "\($0.itemKey) \($0.criterion)=\($0.value) \($0.origin)" }
                == "\(keys[0]) correct=right review")
        #expect(state.message?.text.hasPrefix("✓ correct=right") == true)
        // A digit is the numeric criterion's value here, not the fourth tab; x the boolean's false.
        press([.character("4"), .character("x")], &state)
        #expect(state.focusedPanelID == .review)
        stored = try labels()
        #expect(Set(stored.map { "\($0.criterion)=\($0.value)" }) == ["correct=right", "clarity=4", "grounded=false"])
        #expect(stored.allSatisfy { $0.origin == "review" && $0.itemKey == keys[0] })
        #expect(state.message?.text.contains("item done, enter: next") == true)
        // The rubric shows the chosen verdicts.
        let rubric = panel(state).itemView.rubricLines(theme: .builtInDefault, descriptions: false)
        let selected = Theme.builtInDefault.selection.background
        let chosen = rubric.flatMap { $0 }.filter { selected != nil && $0.style.background == selected }.map(\.text)
        #expect(chosen.contains(" right ") && chosen.contains(" false ") && chosen.contains(" 4 "))
    }

    /// The item's trace is there but its steps do not read (here its prices' table is gone, as
    /// a damaged file would lose it): the status line and the context say so, and the rest of the
    /// item shows as before, rather than a trace with no steps.
    @Test func stepsThatCannotBeReadAreSaidOnTheStatusLine() throws {
        var state = itemView()
        let before = try #require(panel(state).opened)
        let trace = try #require(before.item?.trace?.id)
        #expect(!before.steps.isEmpty && before.stepsProblem == nil)
        _ = try workspace.writeStatements { sql in try sql.execute("DROP TABLE model_prices", []) }

        press([.control("r")], &state)
        let opened = try #require(panel(state).opened)
        let problem = try #require(opened.stepsProblem)
        #expect(problem.hasPrefix("the steps of trace \(trace) could not be read: "), "\(problem)")
        #expect(problem.contains("model_prices"), "\(problem)")
        #expect(opened.steps.isEmpty && opened.item == before.item)
        #expect(state.message?.text == "⚠ " + problem)
        #expect(state.message?.level == .warn)
        let context = panel(state).itemView.contextLines(theme: .builtInDefault, calibration: panel(state).calibration)
            .map { $0.map(\.text).joined() }
        #expect(context.contains("⚠ " + problem))
        // Labelling still works, and says what it did.
        press([.character("r")], &state)
        #expect(state.message?.text.hasPrefix("✓ correct=right") == true)
    }

    @Test func enterAdvancesToTheNextItemAndBracketsWalkTheQueue() throws {
        var state = itemView()
        type("rg3", &state)
        press([.enter], &state)
        #expect(panel(state).item?.key == keys[1])
        #expect(state.render().text().contains("item 2/6 · you 1/6 done"))
        press([.character("[")], &state)
        #expect(panel(state).item?.key == keys[0])
        press([.character("]"), .character("]")], &state)
        #expect(panel(state).item?.key == keys[2])
        // j scrolls the context, not the queue.
        press([.character("j")], &state)
        #expect(panel(state).contextOffset == 1 && panel(state).item?.key == keys[2])
    }

    @Test func anAnswerThatArrivesLateNeverReplacesANewerOne() throws {
        var state = itemView()
        let walked = state.update(.input(.key(.character("]"))))
        let reread = state.update(.input(.key(.control("r"))))
        let older = try #require(walked.first { $0.request(as: ReviewPanel.OpenItem.self) != nil })
        let newer = try #require(reread.first { $0.request(as: ReviewPanel.OpenItem.self) != nil })
        #expect(older.request(as: ReviewPanel.OpenItem.self)?.key == keys[1])
        #expect(newer.request(as: ReviewPanel.OpenItem.self)?.key == keys[0])
        for effect in [newer, older] {
            guard case .port(let call) = effect else { continue }
            _ = state.update(.answered(call.answer(using: ports())))
        }
        #expect(panel(state).item?.key == keys[0])
    }

    @Test func undoTakesBackTheLastLabel() throws {
        var state = itemView()
        type("rg", &state)
        #expect(try labels().count == 2)
        press([.character("u")], &state)
        let left = try labels()
        #expect(left.map(\.criterion) == ["correct"])
        #expect(state.message?.text.contains("took back grounded=true") == true)
        press([.character("u"), .character("u")], &state)
        #expect(try labels().isEmpty)
        #expect(state.message?.text.contains("nothing of yours to undo") == true)
        #expect(panel(state).item?.key == keys[0])
    }

    @Test func skipPutsTheItemAfterTheRest() throws {
        var state = itemView()
        press([.character("s")], &state)
        #expect(panel(state).item?.key == keys[1])
        #expect(try workspace.reviews.reviewSkips(queue: queue.id, annotator: "ana") == [keys[0]])
        for _ in 1..<keys.count {
            type("wx2", &state)
            press([.enter], &state)
        }
        // Every other item done, the skipped one comes back.
        #expect(panel(state).item?.key == keys[0])
        type("rg5", &state)
        press([.enter], &state)
        #expect(panel(state).item == nil)
        #expect(state.render().text().contains("Nothing left for you in arith"))
    }

    @Test func theNoteIsWrittenOnItsLineAndItsKeysDoNotLabel() throws {
        var state = itemView()
        press([.character("n")], &state)
        #expect(panel(state).capturesText)
        type("right units, wrong sum", &state)
        press([.enter], &state)
        let stored = try labels()
        #expect(stored.map { "\($0.criterion)=\($0.value)" } == ["note=right units, wrong sum"])
        #expect(!panel(state).capturesText)
    }

    @Test func qAndEscGoBackAndOnlyTheQueueListLetsQQuit() {
        var state = itemView()
        #expect(state.update(.input(.key(.character("q")))).isEmpty)
        #expect(panel(state).view == .queues)
        press([.enter], &state)
        press([.escape], &state)
        #expect(panel(state).view == .queues)
        #expect(state.update(.input(.key(.character("q")))) == [.quit])
    }

    @Test func theCalibrationListsTheDisagreementsAndOpensOne() throws {
        // ana and ben pass every answer but the first that match() passes: the wrong answer match()
        // fails and that one are the disagreements.
        let passing = try #require(
            keys.first { try service.item(queue, key: $0).answer?.score("match")?.passed == true })
        for key in keys {
            for person in ["ana", "ben"] {
                try service.label(
                    queue, key: key, annotator: person,
                    values: [("correct", key == passing ? "w" : "r"), ("grounded", "g")])
            }
        }
        var state = reviewTab()
        press([.character("c")], &state)
        let calibration = try #require(panel(state).calibration)
        #expect(calibration.scorer == "match" && calibration.criterion == "correct")
        #expect(calibration.disagreements.count == 2)
        let text = state.render().text()
        #expect(text.contains("judge vs people") && text.contains("disagreements: 2"))
        #expect(text.contains("prediction-powered"))
        check(state, "review-calibration-120x36")
        check(
            {
                var small = reviewTab(width: 80, height: 24)
                press([.character("c")], &small)
                return small
            }(), "review-calibration-80x24")
        press([.character("j"), .enter], &state)
        let opened = calibration.disagreements[1].key
        #expect(panel(state).view == .item && panel(state).item?.key == opened)
        #expect(state.render().text().contains("people pass · judge match fail"))
        press([.escape], &state)
        #expect(panel(state).view == .calibration)
        press([.escape], &state)
        #expect(panel(state).view == .queues)
        // From an item, c calibrates its queue and esc comes back to the item; an item opened from
        // that calibration goes back to it, and from it to the queues.
        press([.enter, .character("c")], &state)
        #expect(panel(state).view == .calibration)
        press([.character("q")], &state)
        #expect(panel(state).view == .item)
        press([.character("c"), .enter, .escape, .escape], &state)
        #expect(panel(state).view == .queues)
    }

    /// An item whose stored reference does not read back opens without it and says which queue,
    /// item and column on screen, instead of passing for an item that never had one.
    @Test func anItemWhoseReferenceDoesNotReadBackSaysSo() throws {
        let queueID = try #require(queue.record.id)
        _ = try workspace.writeStatements { statements in
            try statements.execute(
                "UPDATE review_items SET ref_json = '{\"kind\": ' WHERE queue_id = ? AND item_key = ?",
                [.integer(queueID), .text(keys[0])])
        }
        let state = itemView()
        let item = try #require(panel(state).item)
        #expect(item.key == keys[0])
        #expect(
            item.unreadable.map(\.headline) == ["unreadable reference (queue arith, item \(keys[0]), column ref_json)"])
        let context = panel(state).itemView.contextLines(theme: .builtInDefault, calibration: panel(state).calibration)
            .map { $0.map(\.text).joined() }
        #expect(
            context.contains {
                $0.hasPrefix("⚠ unreadable reference (queue arith, item \(keys[0]), column ref_json): line 1")
            }, "\(context)")
        // The answer it stands for is still shown.
        #expect(item.answer != nil)
    }

    /// Every own action is reached by a key in the view it acts in (`PanelActionTests.reachable`):
    /// the item view, whose keys come before the global ones, reaches them all; the calibration
    /// its next scorer, back, calibrate and reload; the queue list calibrate and reload (there `n`
    /// and `q` are the global search and quit, as an item's note and back mean nothing there).
    @Test func everyActionIsReachedByAKeyInTheViewItActsIn() throws {
        var state = itemView()
        #expect(panel(state).view == .item)
        let inItem = PanelActionTests.reachable(in: panel(state))
        let all = Set(ReviewPanel.ownActions)
        #expect(inItem.isSuperset(of: all), "the item view misses \(all.subtracting(inItem).count) actions")
        press([.character("c")], &state)
        #expect(panel(state).view == .calibration)
        let inCalibration = PanelActionTests.reachable(in: panel(state))
        let calibrating: [ReviewPanel.Action] = [.skip, .calibrate, .back, .reload]
        #expect(inCalibration.isSuperset(of: calibrating.map(PanelOwnAction.init)))
        let inQueues = PanelActionTests.reachable(in: panel(reviewTab()))
        let listing: [ReviewPanel.Action] = [.calibrate, .reload]
        #expect(inQueues.isSuperset(of: listing.map(PanelOwnAction.init)))
        #expect(!inQueues.contains(PanelOwnAction(ReviewPanel.Action.back)), "q quits from the queue list")
    }

    /// Calibrating a queue nobody has labelled says there is nothing to compare yet and what
    /// to press, not that the judge and the people agree on every (no) labelled answer.
    @Test func calibratingBeforeAnyLabelSaysWhatToPress() throws {
        var state = reviewTab(width: 80, height: 24)
        press([.character("c")], &state)
        let calibration = try #require(panel(state).calibration)
        #expect(calibration.labelled == 0)
        let text = state.render().text()
        #expect(!text.contains("agree on every labelled answer"), "\(text)")
        #expect(text.contains("nothing labelled yet on correct"), "\(text)")
        // The keys' line fits 80 columns whole.
        #expect(text.contains("esc queues · enter your next item; its rubric keys label it · c again"), "\(text)")
    }

    @Test func labelTextFromTheWorkspaceIsSanitisedBeforeItIsDrawn() throws {
        try service.label(
            queue, key: keys[0], annotator: "eve\u{1B}[2J",
            values: [("correct", "p"), ("note", "\u{1B}]0;owned\u{07} \u{202E}txt.exe\u{0B}")])
        var state = reviewTab()
        for text in [state.render().text()] {
            #expect(text.contains("eve␛[2J"))
        }
        press([.enter], &state)
        let text = state.render().text()
        #expect(text.contains("eve␛[2J: partly"))
        #expect(text.contains("␛]0;owned␇ �txt.exe␋"))
        let controls = text.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x80..<0xA0).contains($0.value) || (0x202A...0x202E).contains($0.value)
        }
        #expect(controls.isEmpty)
    }

    @Test func theItemViewFitsAnEightyColumnTerminal() throws {
        try service.label(queue, key: keys[0], annotator: "ben", values: [("correct", "w"), ("clarity", "2")])
        var state = itemView(width: 80, height: 24)
        press([.character("r")], &state)
        check(state, "review-item-80x24")
        let text = state.render().text()
        #expect(text.contains("r right  p partly  w wrong") && text.contains("ben: wrong  ≠"))
    }

    /// A step queue shows the step (its conversation, call and result) and marks it among the
    /// trace's steps; a session queue lists the session's turns.
    @Test func aStepShowsItsConversationAndItsPlaceInTheTrace() throws {
        var request = ReviewService.QueueRequest(
            name: "steps", rubricPath: Self.repository("rubrics/step-quality.yaml"), source: "steps kind:llm",
            createdBy: "test")
        request.limit = 1
        let steps = try service.createQueue(request)
        let key = try #require(try workspace.reviews.reviewItems(queue: steps.id).first?.itemKey)
        var state = reviewTab()
        // The new queue is the second row.
        press([.down, .enter], &state)
        #expect(panel(state).item?.key == key)
        let text = state.render().text()
        #expect(text.contains("Step") && text.contains("Input") && text.contains("the conversation as it stood"))
        #expect(text.contains("▶"))
        #expect(text.contains("g good") && text.contains("x wrong"))
        press([.character("g")], &state)
        #expect(try workspace.reviews.reviewLabels(queue: steps.id).map(\.value) == ["good"])
    }

    /// d puts the item's dataset add line on the : line: the target to edit, or one's note.
    @Test func dKeepsTheItemAsADatasetItemWithItsExpectedOutputToEdit() throws {
        var state = itemView()
        let row = try #require(panel(state).item?.answer)
        press([.character("d")], &state)
        #expect(state.mode == .commandLine)
        let from = "answer:\(row.result.runID)/\(row.result.itemID)/\(row.result.epoch)"
        #expect(
            state.commandLine.text
                == "dataset add kept-arith.jsonl --from \(from) --expected " + EvalsPanel.quote(row.targets[0]))
        press([.escape], &state)
        try service.label(queue, key: keys[0], annotator: "ana", values: [("note", "the answer is 126")])
        press([.control("r")], &state)
        press([.character("d")], &state)
        #expect(state.commandLine.text == "dataset add kept-arith.jsonl --from \(from) --expected-note arith --as ana")
    }

    @Test func theHelpListsTheRubricsKeysInTheItemView() {
        let state = itemView()
        let bindings = state.panels[state.focusedPanel].keymap.bindings
        let help = Dictionary(
            bindings.flatMap { binding in binding.keys.map { ($0.displayName, binding.help) } },
            uniquingKeysWith: { a, _ in a })
        #expect(help["r"] == "Label correct: right" && help["x"] == "Label grounded: false")
        #expect(help["5"] == "Label clarity: 5" && help["6"] == nil)
        #expect(help["u"] == "Item: take back your last label")
        // The queue list keeps the digits for the tabs.
        #expect(!reviewTab().panels[7].keymap.bindings.contains { $0.keys.contains(.character("1")) })
    }

    // MARK: - Pairwise

    /// Two runs over the same four items written through the store (a terse system and a wordy
    /// one, scored by `contains` and `token_f1`) and a pairwise queue `duel` of the first versus
    /// the second; the queue list then holds arith and duel.
    private func duel() throws -> (queue: ReviewService.Queue, runs: [Int64]) {
        let questions = [
            ("boil", "At what temperature does water boil at sea level?", "100 °C"),
            ("moon", "How far is the Moon from the Earth?", "384,400 km"),
            ("light", "How long does sunlight take to reach the Earth?", "8 minutes 20 seconds"),
            ("pi", "What is pi to three decimal places?", "3.142"),
        ]
        let runs = try ["terse", "wordy"].enumerated().map { index, suite in
            let run = try workspace.evals.createEvalRun(
                EvalRunRecord(
                    suite: suite, suiteFile: nil, suiteHash: "s", datasetHash: "d", targetKind: "model",
                    targetJSON: "{}", scorersJSON: #"["contains","token_f1"]"#, epochs: 1, planned: 4,
                    loupeVersion: "test", gitRevision: nil))
            for (item, question, target) in questions {
                let output =
                    index == 0
                    ? target
                    : "Taking the question at face value and at standard conditions, the answer is about "
                        + "\(target), give or take what the instruments of the day could tell apart."
                let f1 = index == 0 ? 1.0 : 0.25
                try workspace.evals.recordEvalResult(
                    EvalResultRecord(
                        runID: run, itemID: item, epoch: 1, input: question, targetsJSON: "[\"\(target)\"]",
                        output: output, error: nil, latencyMs: index == 0 ? 12 : 840),
                    scores: [
                        EvalScoreRecord(
                            runID: run, itemID: item, epoch: 1, scorer: "contains", value: 1, passed: true,
                            explanation: ""),
                        EvalScoreRecord(
                            runID: run, itemID: item, epoch: 1, scorer: "token_f1", value: f1, passed: f1 >= 0.5,
                            explanation: ""),
                    ])
            }
            return run
        }
        var request = ReviewService.QueueRequest(
            name: "duel", rubricPath: nil, source: "answers run:\(runs[0])", createdBy: "test")
        request.versus = runs[1]
        request.seed = 11
        return (try service.createQueue(request), runs)
    }

    /// The app in the duel queue's item view, at ana's first pair.
    private func pairView(width: Int = 120, height: Int = 36) -> AppState {
        var state = reviewTab(width: width, height: height)
        press([.character("j"), .enter], &state)
        return state
    }

    @Test func aPairSetsItsTwoAnswersSideBySideWithoutNamingTheirRuns() throws {
        let (queue, runs) = try duel()
        let firstKey = try #require(try workspace.reviews.reviewItems(queue: queue.id).first?.itemKey)
        try service.label(queue, key: firstKey, annotator: "ben", values: [("preference", "b")])
        var state = pairView()
        let pair = try #require(panel(state).item?.pair)
        #expect(panel(state).openQueue == queue.name)
        let text = state.render().text()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.contains("duel · ana · item 1/4 · you 0/4 done"))
        #expect(text.contains("Question  " + pair.left.result.input) && text.contains("Expected  "))
        // A and B head two columns on one line, and their answers begin on the same row.
        #expect(lines.contains { $0.contains("─ A ─") && $0.contains("┬─ B ─") })
        let terse = pair.left.result.runID == runs[0] ? pair.left : pair.right
        let first = try #require(lines.firstIndex { $0.contains("Taking the question") })
        #expect(lines[first].contains(terse.result.output ?? "?") && lines[first].contains("│"))
        // Each side's scores under it; which run wrote which stays hidden.
        #expect(lines.contains { $0.contains("✓ token_f1 1.000") && $0.contains("✗ token_f1 0.250") })
        #expect(!text.contains("terse") && !text.contains("wordy") && !text.contains("run \(runs[0])"))
        #expect(text.contains("preference    a A   b B   = tie") && text.contains("reason   n says why"))
        #expect(text.contains("ben: B"))
        check(state, "review-pairwise-120x36")
        // j scrolls both answers together; the header and the strip stay.
        press([.character("j")], &state)
        #expect(panel(state).contextOffset == 1)
    }

    @Test func aKeyStoresThePreferenceWithOriginReviewAndRevealsTheRuns() throws {
        let (queue, runs) = try duel()
        var state = pairView(width: 80, height: 24)
        let pair = try #require(panel(state).item?.pair)
        #expect(!state.render().text().contains("= run "))
        press([.character("a")], &state)
        let stored = try workspace.reviews.reviewLabels(queue: queue.id)
        #expect(
            stored.map { "\($0.annotator) \($0.criterion)=\($0.value) \($0.origin)" } == ["ana preference=A review"])
        #expect(stored.first?.itemKey == panel(state).item?.key)
        let suite = { (run: Int64) in run == runs[0] ? "terse" : "wordy" }
        let text = state.render().text()
        #expect(text.contains("A = run \(pair.leftRun) (\(suite(pair.leftRun)))"))
        #expect(text.contains("B = run \(pair.rightRun) (\(suite(pair.rightRun)))"))
        #expect(state.message?.text.hasPrefix("✓ preference=A") == true)
        // The verdict shows chosen in the strip; n writes the reason on its line.
        let strip = panel(state).itemView.verdictLines(
            item: try #require(panel(state).item), opened: try #require(panel(state).opened), theme: .builtInDefault)
        let selected = Theme.builtInDefault.selection.background
        #expect(strip.flatMap { $0 }.filter { $0.style.background == selected }.map(\.text) == [" a", " A "])
        press([.character("n")], &state)
        type("says the number, nothing else", &state)
        press([.enter], &state)
        #expect(
            try workspace.reviews.reviewLabels(queue: queue.id).map { "\($0.criterion)=\($0.value)" }
                == ["preference=A", "reason=says the number, nothing else"])
        check(state, "review-pairwise-80x24")
        // b changes the verdict: the newest label is the one that counts.
        press([.character("b")], &state)
        #expect(try service.pairwise(queues: ["duel"]).games == 1)
        #expect(state.message?.text.hasPrefix("✓ preference=B") == true)
    }

    @Test func thePairwiseQueuesDetailShowsTheRunsHeadToHead() throws {
        let (queue, runs) = try duel()
        var state = reviewTab()
        press([.character("j")], &state)
        #expect(state.render().text().contains("head to head  no verdict yet"))
        // ana prefers the terse run on three pairs and calls the fourth a tie.
        for (index, record) in try workspace.reviews.reviewItems(queue: queue.id).enumerated() {
            let pair = try #require(try service.item(queue, record: record).pair)
            let verdict = index == 3 ? "=" : pair.leftRun == runs[0] ? "a" : "b"
            try service.label(queue, key: record.itemKey, annotator: "ana", values: [("preference", verdict)])
        }
        press([.control("r")], &state)
        let report = try service.pairwise(queues: ["duel"])
        let terse = try #require(report.winRates.first { $0.system == "run \(runs[0]) (terse)" })
        #expect(terse.wins == 3 && terse.ties == 1 && terse.losses == 0)
        let text = state.render().text()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.contains("head to head · 4 verdicts"))
        let interval = String(format: "[%.0f–%.0f%%]", terse.rate.lower * 100, terse.rate.upper * 100)
        #expect(
            lines.contains {
                $0.contains("run \(runs[0]) (terse)") && $0.contains(" 88%") && $0.contains(interval)
                    && $0.contains("3W 1T 0L")
            })
        #expect(
            lines.contains { $0.contains("run \(runs[1]) (wordy)") && $0.contains(" 12%") && $0.contains("0W 1T 3L") })
        #expect(text.contains("enter judge from your next pair") && !text.contains("judge vs people"))
        #expect(reviewTab(width: 80, height: 24).render().text().contains("arith"))
        var small = reviewTab(width: 80, height: 24)
        press([.character("j")], &small)
        #expect(small.render().text().contains("3W 1T 0L"))
    }
}
