import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import Synchronization
import Testing

/// Review queues, labels and calibration on real workspaces: the sample Inspect AI log (three
/// questions × two epochs scored by `match()`, one wrong answer) and runs written through the store.
@Suite struct ReviewServiceTests {
    static let rubric = KitFixtures.path("rubrics/answer-quality.yaml")

    static func inspectRun() throws -> (Workspace, ReviewService, Int64) {
        let workspace = try KitFixtures.workspace("review")
        _ = try TraceService(workspace: workspace).importFiles([
            KitFixtures.path("sample-data/traces/inspect-arith.eval")
        ])
        let run = try #require(try workspace.evals.evalRuns().first?.id)
        return (workspace, ReviewService(workspace: workspace), run)
    }

    static func request(_ name: String, from: String, annotators: [String] = [], overlap: Int = 1, seed: UInt64 = 7)
        -> ReviewService.QueueRequest
    {
        var request = ReviewService.QueueRequest(name: name, rubricPath: rubric, source: from, createdBy: "test")
        request.annotators = annotators
        request.overlap = overlap
        request.seed = seed
        return request
    }

    @Test func aQueueHoldsTheFilteredAnswersShuffledBySeed() throws {
        let (_, service, run) = try Self.inspectRun()
        let all = try service.createQueue(Self.request("all", from: "answers run:\(run)"))
        let again = try service.createQueue(Self.request("again", from: "answers run:\(run)"))
        let other = try service.createQueue(Self.request("other", from: "answers run:\(run)", seed: 8))
        let keys = { (queue: ReviewService.Queue) in try service.reviews.reviewItems(queue: queue.id).map(\.itemKey) }
        #expect(try keys(all).count == 6)
        #expect(try keys(all) == keys(again))
        #expect(try Set(keys(all)) == Set(keys(other)))
        #expect(try keys(all) != keys(other))
        let failed = try service.createQueue(Self.request("failed", from: "answers run:\(run) failed"))
        #expect(try keys(failed).count == 1)
        let q2 = try service.createQueue(Self.request("q2", from: "answers run:\(run) item:q2"))
        #expect(try Set(keys(q2)) == ["run:\(run)/q2/1", "run:\(run)/q2/2"])
        let traces = try service.createQueue(Self.request("traces", from: "traces format:inspect"))
        #expect(try keys(traces).count == 6 && keys(traces).allSatisfy { $0.hasPrefix("trace:") })
        #expect(throws: ReviewError.self) { try service.createQueue(Self.request("all", from: "answers run:\(run)")) }
        #expect(throws: ReviewError.self) {
            try service.createQueue(Self.request("none", from: "answers run:\(run) zebra"))
        }
        #expect(throws: ReviewError.self) { try service.createQueue(Self.request("norun", from: "answers failed")) }
        #expect(throws: ReviewError.self) { try service.createQueue(Self.request("gone", from: "answers run:99")) }
        #expect(throws: ReviewError.self) { try service.createQueue(Self.request("what", from: "documents")) }
        #expect(try service.queues().map(\.name) == ["all", "again", "other", "failed", "q2", "traces"])
    }

    @Test func labellingWalksTheQueueWithSkipAndUndo() throws {
        let (workspace, service, run) = try Self.inspectRun()
        let queue = try service.createQueue(Self.request("walk", from: "answers run:\(run)"))
        let order = try workspace.reviews.reviewItems(queue: queue.id).map(\.itemKey)
        var next = try #require(try service.next(queue, annotator: "ana"))
        #expect(next.key == order[0] && next.answer?.score("match") != nil)

        // A wrong value stores nothing, not even the right ones beside it.
        #expect(throws: ReviewError.self) {
            try service.label(queue, key: next.key, annotator: "ana", values: [("correct", "r"), ("clarity", "9")])
        }
        #expect(try workspace.reviews.reviewLabels(queue: queue.id).isEmpty)

        // Part of the rubric labels the item but does not finish it.
        try service.label(queue, key: next.key, annotator: "ana", values: [("correct", "r")])
        #expect(try service.next(queue, annotator: "ana")?.key == order[0])
        try service.label(
            queue, key: next.key, annotator: "ana", values: [("grounded", "g"), ("clarity", "4"), ("note", "fine")])
        next = try #require(try service.next(queue, annotator: "ana"))
        #expect(next.key == order[1])
        // Someone else still starts at the beginning.
        #expect(try service.next(queue, annotator: "ben")?.key == order[0])

        // Skipped items come back after the rest.
        try service.skip(queue, key: order[1], annotator: "ana")
        #expect(try service.next(queue, annotator: "ana")?.key == order[2])
        for key in order[2...] {
            try service.label(
                queue, key: key, annotator: "ana", values: [("correct", "w"), ("grounded", "x"), ("clarity", "2")])
        }
        #expect(try service.next(queue, annotator: "ana")?.key == order[1])

        // Undo takes the last label away: that item is open again.
        let undone = try #require(try service.undo(queue, annotator: "ana"))
        #expect(undone.itemKey == order[5] && undone.criterion == "clarity")
        #expect(try service.next(queue, annotator: "ana")?.key == order[5])
        #expect(try service.undo(queue, annotator: "nobody") == nil)

        let progress = try service.progress(queue)
        #expect(progress.items == 6 && progress.labelled == 4 && progress.shared == 0)
        #expect(progress.annotators.map(\.name) == ["ana"])
        #expect(progress.annotators[0].finished == 4 && progress.annotators[0].skipped == 1)

        // Labelling again replaces one's own label; another person's stays beside it.
        try service.label(queue, key: order[0], annotator: "ana", values: [("correct", "partly")])
        try service.label(queue, key: order[0], annotator: "ben", values: [("correct", "right")])
        let first = try workspace.reviews.reviewLabels(queue: queue.id).filter {
            $0.itemKey == order[0] && $0.criterion == "correct"
        }
        #expect(Set(first.map { "\($0.annotator)=\($0.value)" }) == ["ana=partly", "ben=right"])
        #expect(
            first.allSatisfy {
                $0.rubricVersion == 1 && $0.rubricHash == queue.record.rubricHash && $0.origin == "command"
            })
    }

    @Test func assignedItemsGoToTheirAnnotatorsWithOverlap() throws {
        let (workspace, service, run) = try Self.inspectRun()
        let single = try service.createQueue(
            Self.request("single", from: "answers run:\(run)", annotators: ["ana", "ben", "cy"]))
        let assignments = try workspace.reviews.reviewAssignments(queue: single.id)
        #expect(assignments.count == 6 && assignments.values.allSatisfy { $0.count == 1 })
        #expect(assignments.values.filter { $0 == ["ana"] }.count == 2)
        let mine = try workspace.reviews.reviewItems(queue: single.id).filter { assignments[$0.itemKey] == ["ben"] }
            .map(
                \.itemKey)
        #expect(try service.next(single, annotator: "ben")?.key == mine.first)
        #expect(try service.next(single, annotator: "dora") == nil)
        let double = try service.createQueue(
            Self.request("double", from: "answers run:\(run)", annotators: ["ana", "ben", "cy"], overlap: 2))
        #expect(try workspace.reviews.reviewAssignments(queue: double.id).values.allSatisfy { $0.count == 2 })
        #expect(try service.progress(double).annotators.map(\.assigned) == [4, 4, 4])
        #expect(throws: ReviewError.self) {
            try service.createQueue(Self.request("too", from: "answers run:\(run)", annotators: ["ana"], overlap: 2))
        }
    }

    /// Two annotators in two processes' worth of connections label at once: every label is kept.
    @Test func twoAnnotatorsAtOnceBothKeepTheirLabels() throws {
        let (workspace, service, run) = try Self.inspectRun()
        let queue = try service.createQueue(Self.request("both", from: "answers run:\(run)"))
        let keys = try workspace.reviews.reviewItems(queue: queue.id).map(\.itemKey)
        let other = try Workspace(path: workspace.path)
        let services = [service, ReviewService(workspace: other)]
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let annotator = index == 0 ? "ana" : "ben"
            do {
                let queue = try services[index].queue("both")
                for key in keys {
                    try services[index].label(
                        queue, key: key, annotator: annotator, values: [("correct", index == 0 ? "r" : "w")])
                }
            } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let labels = try workspace.reviews.reviewLabels(queue: queue.id)
        #expect(labels.count == 12)
        #expect(labels.filter { $0.annotator == "ana" }.allSatisfy { $0.value == "right" })
        #expect(labels.filter { $0.annotator == "ben" }.allSatisfy { $0.value == "wrong" })
    }

    @Test func labelsExportAndImportAndABadLineStoresNothing() throws {
        let (workspace, service, run) = try Self.inspectRun()
        let source = try service.createQueue(Self.request("source", from: "answers run:\(run)"))
        let copy = try service.createQueue(Self.request("copy", from: "answers run:\(run)"))
        let keys = try workspace.reviews.reviewItems(queue: source.id).map(\.itemKey)
        try service.label(
            source, key: keys[0], annotator: "ana", values: [("correct", "r"), ("note", "says \"4\", right")])
        try service.label(source, key: keys[1], annotator: "ben", values: [("clarity", "3")])
        let jsonl = try service.export(source, format: .jsonl)
        #expect(jsonl.split(separator: "\n").count == 3)
        let csv = try service.export(source, format: .csv)
        #expect(csv.hasPrefix("queue,item,run,item_id,epoch,trace,criterion,value,annotator,"))
        #expect(csv.contains("\"says \"\"4\"\", right\""))

        let directory = try KitFixtures.temporaryDirectory("review-import")
        let file = directory + "/labels.jsonl"
        try jsonl.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try service.importLabels(copy, file: file, from: "source") == .init(labels: 3, replaced: 0))
        let imported = try workspace.reviews.reviewLabels(queue: copy.id)
        #expect(
            Set(imported.map { "\($0.itemKey) \($0.criterion)=\($0.value) \($0.annotator)" })
                == Set(
                    try workspace.reviews.reviewLabels(queue: source.id).map {
                        "\($0.itemKey) \($0.criterion)=\($0.value) \($0.annotator)"
                    }))
        #expect(imported.allSatisfy { $0.origin == "import" })

        let bad = directory + "/bad.jsonl"
        try
            ("{\"item\": \"\(keys[2])\", \"criterion\": \"correct\", \"value\": \"right\", \"annotator\": \"cy\"}\n"
            + "{\"item\": \"\(keys[3])\", \"criterion\": \"correct\", \"value\": \"excellent\", \"annotator\": \"cy\"}\n")
            .write(toFile: bad, atomically: true, encoding: .utf8)
        do {
            try service.importLabels(copy, file: bad)
            Issue.record("a value the rubric does not have was imported")
        } catch let error as SuiteError {
            #expect(error.location.line == 2 && error.message.contains("not an option of correct"))
        }
        try "{\"item\": \"x\"\n".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect(throws: SuiteError.self) { try service.importLabels(copy, file: bad) }
        #expect(try workspace.reviews.reviewLabels(queue: copy.id).count == 3)
    }

    @Test func annotatorNamesComeFromTheUserAndAreNeverSecrets() throws {
        #expect(try ReviewService.annotator("ana", environment: [:]) == "ana")
        #expect(try ReviewService.annotator(nil, environment: ["LOUPE_USER": "ben", "USER": "root"]) == "ben")
        #expect(try ReviewService.annotator(nil, environment: ["USER": "root"]) == "root")
        #expect(throws: ReviewError.self) { try ReviewService.annotator(nil, environment: [:]) }
        #expect(throws: ReviewError.self) {
            try ReviewService.annotator(nil, environment: ["LOUPE_USER": "sk-live-1234567890abcdef"])
        }
        #expect(throws: ReviewError.self) {
            try ReviewService.annotator(nil, environment: ["LOUPE_USER": "hunter22", "DB_PASSWORD": "hunter22"])
        }
        #expect(throws: ReviewError.self) { try ReviewService.annotator("a,b", environment: [:]) }
    }

    /// `review as NAME` keeps the name for this person (not the workspace): it is used when neither
    /// --as nor LOUPE_USER says otherwise, and before the login name.
    @Test func aKeptNameIsUsedAfterLoupeUserAndBeforeTheLoginName() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-home-\(UUID())").path
        let environment = ["HOME": home, "USER": "root"]
        #expect(try ReviewService.annotator(nil, environment: environment) == "root")
        let path = try ReviewService.rememberAnnotator("ana", environment: environment)
        #expect(path == home + "/.config/loupe/annotator")
        #expect(try ReviewService.annotator(nil, environment: environment) == "ana")
        #expect(
            try ReviewService.annotator(nil, environment: environment.merging(["LOUPE_USER": "ben"]) { $1 }) == "ben")
        #expect(try ReviewService.annotator("cy", environment: environment) == "cy")
        // XDG_CONFIG_HOME moves it; a secret-looking name is not kept.
        let xdg = ["XDG_CONFIG_HOME": home + "/xdg", "API_KEY": "sk-live-abcdef0123456789"]
        #expect(try ReviewService.rememberAnnotator("dee", environment: xdg) == home + "/xdg/loupe/annotator")
        #expect(throws: ReviewError.self) {
            try ReviewService.rememberAnnotator("sk-live-abcdef0123456789", environment: xdg)
        }
        #expect(try ReviewService.annotator(nil, environment: xdg) == "dee")
    }

    /// Ten answers, a judge that passes the first five, two people who label the first six
    /// (disagreeing on the sixth) and a third who labels only the first.
    static func judgedRun() throws -> (Workspace, ReviewService, Int64, ReviewService.Queue) {
        let workspace = try KitFixtures.workspace("calibrate")
        let run = try workspace.evals.createEvalRun(
            EvalRunRecord(
                suite: "judged", suiteFile: nil, suiteHash: "s", datasetHash: "d", targetKind: "model",
                targetJSON: "{}", scorersJSON: #"["judge", "length"]"#, epochs: 1, planned: 10, loupeVersion: "test",
                gitRevision: nil))
        for index in 0..<10 {
            let item = "i\(index)"
            try workspace.evals.recordEvalResult(
                EvalResultRecord(
                    runID: run, itemID: item, epoch: 1, input: "question \(index)", targetsJSON: "[]",
                    output: "answer \(index)", error: nil, latencyMs: 1),
                scores: [
                    EvalScoreRecord(
                        runID: run, itemID: item, epoch: 1, scorer: "judge", value: index < 5 ? 0.9 : 0.1,
                        passed: index < 5, explanation: ""),
                    EvalScoreRecord(
                        runID: run, itemID: item, epoch: 1, scorer: "length", value: index % 2 == 0 ? 0.7 : 0.2,
                        passed: nil, explanation: ""),
                ])
        }
        let service = ReviewService(workspace: workspace)
        let queue = try service.createQueue(Self.request("people", from: "answers run:\(run)"))
        let ana = ["r", "r", "r", "w", "w", "r"]
        let ben = ["r", "r", "r", "w", "p", "w"]
        for index in 0..<6 {
            let key = ReviewService.answerKey(run: run, item: "i\(index)", epoch: 1)
            try service.label(queue, key: key, annotator: "ana", values: [("correct", ana[index]), ("grounded", "g")])
            try service.label(queue, key: key, annotator: "ben", values: [("correct", ben[index]), ("grounded", "g")])
        }
        try service.label(
            queue, key: ReviewService.answerKey(run: run, item: "i0", epoch: 1), annotator: "cy",
            values: [("correct", "r")])
        return (workspace, service, run, queue)
    }

    /// Two labels that agree with each other and with the judge: the people's Wilson interval is
    /// wide, and PPI++'s normal interval, which has no width there, is not shown as certainty.
    @Test func twoAgreeingLabelsGiveNoPredictionPoweredInterval() throws {
        let (_, service, run, _) = try Self.judgedRun()
        let queue = try service.createQueue(Self.request("two", from: "answers run:\(run)"))
        for index in 0..<2 {
            let key = ReviewService.answerKey(run: run, item: "i\(index)", epoch: 1)
            try service.label(queue, key: key, annotator: "ana", values: [("correct", "r"), ("grounded", "g")])
        }
        let report = try service.calibrate(run: run, queue: "two", scorer: nil, criterion: nil)
        let ppi = try #require(report.passRate)
        #expect(ppi.labeledCount == 2 && ppi.estimate.upper == ppi.estimate.lower)
        #expect(report.predictionPowered == nil)
        let people = try #require(report.peopleAlone)
        #expect(people.lower < 0.5 && people.upper == 1)
        let lines = report.summaryLines()
        #expect(lines.contains { $0.hasPrefix("prediction-powered (PPI++") && $0.hasSuffix("   —") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("prediction-powered: no interval: the 2 labels") }, "\(lines)")
    }

    @Test func aJudgeIsCalibratedAgainstThePeoplesMajority() throws {
        let (_, service, run, _) = try Self.judgedRun()
        let report = try service.calibrate(run: run, queue: "people", scorer: nil, criterion: nil)
        #expect(report.scorer == "judge" && report.criterion == "correct")
        #expect(report.answers == 10 && report.labelled == 6 && report.ties == 1)
        #expect(report.annotators == ["ana", "ben", "cy"])
        // People pass i0–i2 and fail i3–i4 (i5 is a tie); the judge passes i0–i4.
        let versus = try #require(report.judgeVersusPeople).agreement
        #expect(
            versus
                == RaterAgreement(
                    reference: ["pass", "pass", "pass", "fail", "fail"], rated: Array(repeating: "pass", count: 5)))
        #expect(versus.categories == ["fail", "pass"] && versus.confusion == [[0, 2], [0, 3]])
        #expect(report.disagreements.map(\.itemID) == ["i3", "i4"])
        #expect(report.disagreements.allSatisfy { !$0.humanPasses && $0.judgePasses && $0.judgeValue == 0.9 })
        #expect(report.disagreements[1].labels == ["ana": "wrong", "ben": "partly"])
        // The tie counts with the unlabelled answers.
        let ppi = try #require(report.passRate)
        #expect(
            ppi
                == PredictionPoweredMean(
                    labels: [1, 1, 1, 0, 0], predictionsOnLabeled: [1, 1, 1, 1, 1],
                    predictionsOnUnlabeled: [0, 0, 0, 0, 0]))
        // ana and ben agree on five of six items.
        let people = try #require(report.peopleVersusPeople)
        #expect(people.reference == "ana vs ben" && people.agreement.n == 6 && people.agreement.accuracy == 5.0 / 6)
        let alpha = Krippendorff.alpha(
            [
                [1, 1, 1, 0, 0, 1].map { Optional($0) }, [1, 1, 1, 0, 0, 0].map { Optional($0) },
                [1, nil, nil, nil, nil, nil],
            ], level: .nominal)
        #expect(report.alpha == alpha)
        #expect(report.judgeVersusAnnotators.map(\.reference) == ["ana", "ben", "cy"])
        #expect(report.judgeVersusAnnotators[0].agreement.n == 6 && report.judgeVersusAnnotators[2].agreement.n == 1)
        // grounded is a boolean: it says pass or fail too, and everyone said true.
        #expect(report.perCriterion.map(\.reference) == ["correct", "grounded"])
        #expect(report.perCriterion[1].agreement.n == 6 && report.perCriterion[1].agreement.accuracy == 5.0 / 6)

        // A scorer without a threshold passes at 0.5.
        let length = try service.calibrate(run: run, queue: "people", scorer: "length", criterion: "correct")
        #expect(length.judgeVersusPeople?.agreement.confusion == [[1, 1], [1, 2]])
        #expect(throws: ReviewError.self) {
            try service.calibrate(run: run, queue: "people", scorer: "bleu", criterion: nil)
        }
        #expect(throws: ReviewError.self) {
            try service.calibrate(run: run, queue: "people", scorer: nil, criterion: "note")
        }
        #expect(throws: ReviewError.self) {
            try service.calibrate(run: run + 1, queue: "people", scorer: nil, criterion: nil)
        }
    }

    /// Runs of one suite over the same six items, written through the store.
    static func runs(_ workspace: Workspace, count: Int) throws -> [Int64] {
        try (0..<count).map { index in
            let run = try workspace.evals.createEvalRun(
                EvalRunRecord(
                    suite: "system-\(index)", suiteFile: nil, suiteHash: "s", datasetHash: "d", targetKind: "model",
                    targetJSON: "{}", scorersJSON: "[]", epochs: 1, planned: 6, loupeVersion: "test", gitRevision: nil))
            for item in 0..<6 {
                try workspace.evals.recordEvalResult(
                    EvalResultRecord(
                        runID: run, itemID: "i\(item)", epoch: 1, input: "question \(item)", targetsJSON: "[]",
                        output: "system \(index) answers \(item)", error: nil, latencyMs: 1),
                    scores: [])
            }
            return run
        }
    }

    @Test func aPairwiseQueueRecordsTheSidesAndItsVerdictsRankTheRuns() throws {
        let workspace = try KitFixtures.workspace("pairwise")
        let service = ReviewService(workspace: workspace)
        let runs = try Self.runs(workspace, count: 3)
        func pairQueue(_ name: String, _ a: Int64, _ b: Int64) throws -> ReviewService.Queue {
            var request = ReviewService.QueueRequest(
                name: name, rubricPath: nil, source: "answers run:\(a)", createdBy: "test")
            request.versus = b
            return try service.createQueue(request)
        }
        let ab = try pairQueue("ab", runs[0], runs[1])
        #expect(ab.record.mode == "pairwise" && ab.rubric == ReviewService.pairwiseRubric)
        let items = try workspace.reviews.reviewItems(queue: ab.id)
        #expect(items.count == 6)
        let shown = try items.map { try #require(try service.item(ab, record: $0).pair) }
        // Sides are drawn per item: both orders occur, and each side shows its own run's answer.
        #expect(Set(shown.map(\.swapped)) == [false, true])
        for pair in shown {
            #expect(pair.left.result.runID == pair.leftRun && pair.right.result.runID == pair.rightRun)
            #expect(pair.swapped == (pair.leftRun == runs[1]))
            #expect(pair.left.result.itemID == pair.right.result.itemID)
        }

        // Run 0 is preferred on every item, whichever side it was shown on; one tie.
        for (record, pair) in zip(items, shown) {
            let verdict = record.evalItemID == "i5" ? "=" : (pair.leftRun == runs[0] ? "a" : "b")
            try service.label(ab, key: record.itemKey, annotator: "ana", values: [("preference", verdict)])
        }
        let two = try service.pairwise(queues: ["ab"])
        #expect(Set(two.systems) == ["run \(runs[0]) (system-0)", "run \(runs[1]) (system-1)"])
        #expect(two.games == 6 && two.bradleyTerry == nil)
        let first = try #require(two.winRates.first { $0.system.hasPrefix("run \(runs[0]) ") })
        #expect(first.wins == 5 && first.ties == 1 && first.losses == 0 && first.rate.estimate == 5.5 / 6)

        // Three runs: 0 beats 1 (above), 1 beats 2 on four of six, 2 beats 0 on one.
        let bc = try pairQueue("bc", runs[1], runs[2])
        for (index, record) in try workspace.reviews.reviewItems(queue: bc.id).enumerated() {
            let pair = try #require(try service.item(bc, record: record).pair)
            let winner = index < 4 ? runs[1] : runs[2]
            try service.label(
                bc, key: record.itemKey, annotator: "ben", values: [("preference", pair.leftRun == winner ? "A" : "B")])
        }
        let ca = try pairQueue("ca", runs[2], runs[0])
        for (index, record) in try workspace.reviews.reviewItems(queue: ca.id).enumerated() {
            let pair = try #require(try service.item(ca, record: record).pair)
            let winner = index < 1 ? runs[2] : runs[0]
            try service.label(
                ca, key: record.itemKey, annotator: "cy", values: [("preference", pair.leftRun == winner ? "A" : "B")])
        }
        let three = try service.pairwise(queues: ["ab", "bc", "ca"])
        #expect(three.games == 18 && three.systems.count == 3)
        let names = three.systems
        let system = { (run: Int64) in names.first { $0.hasPrefix("run \(run) ") }! }
        var outcomes: [(a: String, b: String, score: Double)] = []
        outcomes +=
            (0..<5).map { _ in (system(runs[0]), system(runs[1]), 1.0) } + [(system(runs[0]), system(runs[1]), 0.5)]
        outcomes +=
            (0..<4).map { _ in (system(runs[1]), system(runs[2]), 1.0) }
            + (0..<2).map { _ in (system(runs[1]), system(runs[2]), 0.0) }
        outcomes +=
            [(system(runs[2]), system(runs[0]), 1.0)] + (0..<5).map { _ in (system(runs[2]), system(runs[0]), 0.0) }
        let expected = BradleyTerry(systems: names, outcomes: outcomes)
        let bt = try #require(three.bradleyTerry)
        #expect(bt.converged && zip(bt.strengths, expected.strengths).allSatisfy { abs($0 - $1) < 1e-12 })
        #expect(
            bt.strengths[names.firstIndex(of: system(runs[0]))!] > bt.strengths[names.firstIndex(of: system(runs[2]))!])

        #expect(throws: ReviewError.self) { try pairQueue("self", runs[0], runs[0]) }
        #expect(throws: ReviewError.self) { try pairQueue("gone", runs[0], 99) }
        let single = try service.createQueue(Self.request("single", from: "answers run:\(runs[0])"))
        #expect(throws: ReviewError.self) { try service.pairwise(queues: [single.name]) }

        // A verdict whose item's stored reference does not read back is left out and named, not
        // counted as an answer that is gone; the other verdicts still count.
        let damagedKey = items[0].itemKey
        _ = try workspace.writeStatements { sql in
            try sql.execute(
                "UPDATE review_items SET ref_json = '{\"runs\": [' WHERE queue_id = ? AND item_key = ?",
                [.integer(ab.id), .text(damagedKey)])
        }
        let left = try service.pairwise(queues: ["ab"])
        #expect(left.games == 5 && left.unreadable == 0)
        #expect(
            left.damaged.map(\.headline) == ["unreadable reference (queue ab, item \(damagedKey), column ref_json)"])
    }

    /// Steps, sessions and retrieval hits: drawn by their filters, each with what an annotator judges.
    @Test func stepsSessionsAndHitsAreQueuedWithTheirContext() throws {
        let (workspace, service, run) = try Self.inspectRun()
        let traces = TraceService(workspace: workspace)
        let trace = try #require(try workspace.evals.evalResults(run: run).first?.traceID)
        let spans = try traces.trace(trace).spans
        // The shipped rubric is for answers and traces: a step is refused until the rubric says so.
        #expect(throws: ReviewError.self) { try service.createQueue(Self.request("steps", from: "steps")) }
        let rubric = try KitFixtures.temporaryDirectory("rubric") + "/every.yaml"
        try """
        name: every
        targets: [trace, step, session, answer, hit]
        criteria:
          - {name: relevant, kind: boolean, true_key: y, false_key: o}
        """.write(toFile: rubric, atomically: true, encoding: .utf8)
        func request(_ name: String, from: String) -> ReviewService.QueueRequest {
            var request = Self.request(name, from: from)
            request.rubricPath = rubric
            return request
        }
        let steps = try service.createQueue(request("steps", from: "steps trace:\(trace) kind:llm"))
        let items = try workspace.reviews.reviewItems(queue: steps.id)
        #expect(items.count == spans.filter { $0.kind == .llm }.count && !items.isEmpty)
        let step = try #require(try service.item(steps, record: items[0]).step)
        #expect(step.traceID == trace && step.span.kind == .llm && step.count == spans.count)
        #expect(throws: ReviewError.self) { try service.createQueue(request("bad", from: "steps colour:red")) }
        #expect(throws: ReviewError.self) { try service.createQueue(request("none", from: "steps trace:999")) }

        // Inspect samples' epochs are one session each.
        let sessions = try service.createQueue(request("sessions", from: "sessions"))
        let sessionItems = try workspace.reviews.reviewItems(queue: sessions.id)
        #expect(sessionItems.count == (try traces.sessions().count) && !sessionItems.isEmpty)
        #expect(try service.item(sessions, record: sessionItems[0]).session?.turns.isEmpty == false)

        // A saved query's top hits, each a (query, chunk) pair.
        let retrieval = RetrievalService(workspace: workspace, models: KitFixtures.models)
        _ = try retrieval.ingest([KitFixtures.path("sample-data/cranfield/corpus.jsonl")], embed: false)
        var options = RetrievalService.Options()
        options.retriever = .bm25
        let result = try retrieval.search("transonic aileron buzz", options: options)
        let record = try retrieval.record("transonic aileron buzz", options: options, hits: result)
        let hits = try service.createQueue(request("hits", from: "hits record:\(record) k:5"))
        let hitItems = try workspace.reviews.reviewItems(queue: hits.id)
        #expect(hitItems.count == 5)
        let hit = try #require(try service.item(hits, record: hitItems[0]).hit)
        #expect(hit.query == "transonic aileron buzz" && hit.record == record)
        #expect(result.prefix(5).contains { $0.chunkID == hit.hit.chunkID && $0.text == hit.hit.text })
        #expect(throws: ReviewError.self) { try service.createQueue(request("nohits", from: "hits k:3")) }
        #expect(throws: ReviewError.self) { try service.createQueue(request("answershits", from: "hits run:\(run)")) }
    }

    /// A fork beside the trace it came from, judged blind; a verdict may name the trace it prefers.
    @Test func aForkIsSetBesideItsOriginal() throws {
        let workspace = try KitFixtures.workspace("forks")
        func trace(_ id: String, answer: String) -> Trace {
            var root = TraceSpan(spanID: "r", parentID: nil, kind: .agent, name: "agent", startNs: 0, endNs: 2_000_000)
            root.input = [Message(role: "user", text: "what is 6 * 7?")]
            root.output = [Message(role: "assistant", text: answer)]
            return Trace(externalID: id, format: .loupe, name: "6 * 7", spans: [root])
        }
        let parent = try #require(
            try workspace.traces.importTraces([TraceService.record(trace("p", answer: "41"), sourceFile: nil)]).ids
                .first)
        let fork = try #require(
            try workspace.traces.importTraces([
                TraceService.record(trace("f", answer: "42"), sourceFile: nil, parentTraceID: parent, forkOrdinal: 1)
            ]).ids.first)
        let service = ReviewService(workspace: workspace)
        var request = ReviewService.QueueRequest(name: "forks", rubricPath: nil, source: "traces", createdBy: "test")
        request.forks = true
        let queue = try service.createQueue(request)
        #expect(queue.record.mode == "pairwise" && queue.record.target == "trace")
        let items = try workspace.reviews.reviewItems(queue: queue.id)
        #expect(items.map(\.itemKey) == ["fork:\(parent)/\(fork)"])
        let pair = try #require(try service.item(queue, record: items[0]).pair)
        let forkSide = pair.leftRun == fork ? pair.left : pair.right
        #expect(forkSide.result.output == "42" && forkSide.result.input == "what is 6 * 7?")
        #expect(
            Set([pair.leftName, pair.rightName]) == ["trace \(fork) (fork at span 1)", "trace \(parent) (original)"])
        try service.label(queue, key: items[0].itemKey, annotator: "ana", values: [("preference", "trace:\(fork)")])
        let stored = try workspace.reviews.reviewLabels(queue: queue.id).map(\.value)
        #expect(stored == [pair.leftRun == fork ? "A" : "B"])
        let report = try service.pairwise(queues: ["forks"])
        let forks = try #require(report.winRates.first { $0.system == "forks" })
        #expect(forks.wins == 1 && forks.losses == 0 && forks.ties == 0)
        #expect(throws: ReviewError.self) {
            try service.label(queue, key: items[0].itemKey, annotator: "ana", values: [("preference", "trace:999")])
        }
        var none = ReviewService.QueueRequest(
            name: "none", rubricPath: nil, source: "traces name:nothing", createdBy: "test")
        none.forks = true
        #expect(throws: ReviewError.self) { try service.createQueue(none) }
    }
}
