import Foundation
import LoupeApp
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
        let run = try #require(try workspace.evalRuns().first?.id)
        service = ReviewService(workspace: workspace)
        var request = ReviewService.QueueRequest(
            name: "arith", rubricPath: Self.repository("rubrics/answer-quality.yaml"), source: "answers run:\(run)",
            createdBy: "test")
        request.seed = 7
        queue = try service.createQueue(request)
        keys = try workspace.reviewItems(queue: queue.id).map(\.itemKey)
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

    /// The app in the item view of the queue, at ana's first item.
    private func itemView(width: Int = 120, height: Int = 36) -> AppState {
        var state = reviewTab(width: width, height: height)
        press([.enter], &state)
        return state
    }

    private func labels(_ annotator: String = "ana") throws -> [ReviewLabelRecord] {
        try workspace.reviewLabels(queue: queue.id).filter { $0.annotator == annotator }
    }

    private func check(_ state: AppState, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectFrame(state.render(), matchesGolden: name, sourceLocation: sourceLocation)
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
        let rubric = panel(state).rubricLines(theme: .builtInDefault, descriptions: false)
        let selected = Theme.builtInDefault.selection.background
        let chosen = rubric.flatMap { $0 }.filter { selected != nil && $0.style.background == selected }.map(\.text)
        #expect(chosen.contains(" right ") && chosen.contains(" false ") && chosen.contains(" 4 "))
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
        #expect(try workspace.reviewSkips(queue: queue.id, annotator: "ana") == [keys[0]])
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
}
