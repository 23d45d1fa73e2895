import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeStore

extension EvalService {
    /// What a dataset item is made from: an answer of a run, a trace, or one step (span) of it.
    package enum DatasetSource: Hashable, Sendable {
        case answer(run: Int64, item: String, epoch: Int)
        case trace(Int64)
        case step(trace: Int64, span: String)
        /// A conversation: every turn but the last as messages, the last answer as the target.
        case session(String)

        /// `answer:RUN/ITEM[/EPOCH]`, `trace:ID`, `step:TRACE/SPAN` or `session:ID`.
        package init(_ text: String) throws(EvalError) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw EvalError("--from \(text): use answer:RUN/ITEM[/EPOCH], trace:ID, step:TRACE/SPAN or session:ID")
            }
            let fields = parts[1].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            switch parts[0] {
            case "answer":
                guard fields.count >= 2, let run = Int64(fields[0]) else {
                    throw EvalError("--from \(text): an answer is answer:RUN/ITEM[/EPOCH]")
                }
                var item = fields.dropFirst().joined(separator: "/")
                var epoch = 1
                if fields.count >= 3, let last = Int(fields.last!) {
                    epoch = last
                    item = fields.dropFirst().dropLast().joined(separator: "/")
                }
                self = .answer(run: run, item: item, epoch: epoch)
            case "trace":
                guard let id = Int64(parts[1]) else { throw EvalError("--from \(text): a trace is trace:ID") }
                self = .trace(id)
            case "session":
                guard !parts[1].isEmpty else { throw EvalError("--from \(text): a session is session:ID") }
                self = .session(parts[1])
            case "step":
                guard fields.count == 2, let trace = Int64(fields[0]), !fields[1].isEmpty else {
                    throw EvalError("--from \(text): a step is step:TRACE/SPAN")
                }
                self = .step(trace: trace, span: fields[1])
            default:
                throw EvalError("--from \(text): use answer:RUN/ITEM[/EPOCH], trace:ID, step:TRACE/SPAN or session:ID")
            }
        }
    }

    package struct DatasetAddition: Hashable, Sendable {
        package var dataset: String
        package var id: String
        package var line: Int
        package var input: String
        package var expected: [String]
        package var suite: String?
        package var suiteCreated: Bool
    }

    /// Appends an item made from what the user saw to a JSON Lines dataset: its input, the
    /// expected output (`expected`, else the answer's targets or the step's output), and a
    /// `source` object (workspace, run, item, epoch, trace, span) that links it back. With `suite`,
    /// a suite using the dataset is created from `like` (its target and scorers), or checked to use
    /// it already. The item is appended in place to the file the path resolves to (a symlinked
    /// dataset's target), in one write that is undone if it fails.
    package func addToDataset(
        _ path: String, from source: DatasetSource, expected: String?, id: String?, suite: String?, like: String?
    ) throws -> DatasetAddition {
        var input: String
        /// The input as written: the text, or a session's turns as chat messages.
        var inputValue: JSONValue?
        var targets: [String]
        // Where it came from: the file, or the database's URL without its password.
        var origin: [String: JSONValue] = [
            "workspace": .string(
                evals.database.file.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                    ?? evals.database.displayName)
        ]
        let traceService = TraceService(tables: TraceTables(evals.database))
        var defaultID: String
        switch source {
        case .answer(let run, let item, let epoch):
            guard
                let result = try evals.evalResults(run: run).first(where: { $0.itemID == item && $0.epoch == epoch }
                )
            else {
                throw EvalError("run \(run) has no answer for item \(item) at epoch \(epoch) (loupe eval show \(run))")
            }
            input = result.input
            // Targets that do not read back are an error naming the answer, not an item that
            // expects nothing.
            let row = "run \(run), item \(item) epoch \(epoch)"
            targets =
                (try JSONValue.parse(stored: result.targetsJSON, "targets", row: row, column: "targets_json").array
                ?? []).map(\.text)
            origin["run"] = .number(Double(run))
            origin["item"] = .string(item)
            origin["epoch"] = .number(Double(epoch))
            if let trace = result.traceID { origin["trace"] = .number(Double(trace)) }
            defaultID = item
        case .session(let id):
            guard let session = try traceService.session(id) else {
                throw EvalError("no session \(id) (loupe session list)")
            }
            var messages: [JSONValue] = []
            targets = []
            for (index, turn) in session.turns.enumerated() {
                let spans = try traceService.trace(turn.id).spans.sorted { $0.startNs < $1.startNs }
                let user = spans.flatMap(\.input).first { $0.role == "user" }?.text ?? turn.name
                messages.append(.object(["role": "user", "content": .string(user)]))
                let answer = Self.finalAnswer(spans)
                if index < session.turns.count - 1 {
                    if let answer { messages.append(.object(["role": "assistant", "content": .string(answer)])) }
                } else {
                    targets = answer.map { [$0] } ?? []
                }
            }
            inputValue = .array(messages)
            input = messages.compactMap { $0["content"]?.string }.joined(separator: "\n")
            origin["session"] = .string(id)
            origin["trace"] = session.turns.last.map { .number(Double($0.id)) } ?? .null
            defaultID = "session-" + String(id.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }.prefix(40))
        case .trace(let id), .step(let id, _):
            let trace = try traceService.trace(id)
            let spans: [TraceSpan]
            if case .step(_, let spanID) = source {
                guard let span = trace.spans.first(where: { $0.spanID == spanID }) else {
                    throw EvalError("trace \(id) has no span \(spanID) (loupe trace show \(id))")
                }
                spans = [span]
                origin["span"] = .string(spanID)
                defaultID = "trace-\(id)-\(spanID)"
            } else {
                spans = trace.spans.sorted { $0.startNs < $1.startNs }
                defaultID = "trace-\(id)"
            }
            origin["trace"] = .number(Double(id))
            let userTurns = spans.flatMap(\.input).filter { $0.role == "user" }.map(\.text)
            input = userTurns.first ?? ""
            targets = Self.finalAnswer(spans).map { [$0] } ?? []
            guard !input.isEmpty else {
                throw EvalError("trace \(id) has no user message to take as the input: add the item by hand")
            }
        }
        if let expected { targets = [expected] }
        // The dataset's existing items: their ids must stay unique.
        let existing = FileManager.default.fileExists(atPath: path)
        var text = ""
        var ids = Set<String>()
        if existing {
            do { text = try TextFile.read(path) } catch { throw EvalError("\(error)") }
            ids = Set(try Dataset.items(Data(text.utf8), spec: DatasetSpec(path: path)).map(\.id))
        }
        var chosen = id ?? defaultID
        if id != nil, ids.contains(chosen) { throw EvalError("\(path) already has an item \(chosen)") }
        var suffix = 2
        while ids.contains(chosen) {
            chosen = defaultID + "-\(suffix)"
            suffix += 1
        }
        let item: JSONValue = .object([
            "id": .string(chosen), "input": inputValue ?? .string(input),
            "target": targets.count == 1 ? .string(targets[0]) : .array(targets.map(JSONValue.string)),
            "source": .object(origin),
        ])
        if !text.isEmpty, !text.hasSuffix("\n") { text += "\n" }
        text += item.compactJSON + "\n"
        let lineNumber = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        try Self.append(item.compactJSON + "\n", to: path)
        var addition = DatasetAddition(
            dataset: path, id: chosen, line: lineNumber, input: input, expected: targets, suite: suite,
            suiteCreated: false)
        if let suite { addition.suiteCreated = try ensureSuite(suite, dataset: path, like: like) }
        return addition
    }

    /// What the spans answered: a root span's output, else the answer a `final_answer` tool was
    /// called with (Loupe's agent, smolagents), else the last model call's text.
    package static func finalAnswer(_ spans: [TraceSpan]) -> String? {
        let ids = Set(spans.map(\.spanID))
        if let root = spans.first(where: { $0.parentID.map { !ids.contains($0) } ?? true }),
            let text = root.output.last?.text, !text.isEmpty
        {
            return text
        }
        // A model wrote the arguments: text that is not JSON is no answer, and the last model
        // call's text is taken instead.
        if let tool = spans.last(where: { $0.tool?.name == "final_answer" })?.tool,
            let answer = (try? JSONValue.parse(tool.arguments))?["answer"]?.string
        {
            return answer
        }
        return spans.last(where: { $0.output.contains { !$0.text.isEmpty } })?.output.last { !$0.text.isEmpty }?.text
    }

    /// Appends `line` to the file at `path` (created if missing), in place: a symlink's target gets
    /// it and the file keeps its owner and mode. A newline goes first when the file does not end
    /// with one; the bytes go in one `write`, and the file is cut back to its length if it fails.
    ///
    /// - Throws: ``EvalError`` naming the file when it is read-only or cannot be written.
    static func append(_ line: String, to path: String) throws {
        var status = stat()
        // Write permission is checked on the mode, not left to open(2): root may write anything.
        if stat(path, &status) == 0, status.st_mode & 0o222 == 0 {
            throw EvalError(
                "cannot add to \(path): it is read-only (mode \(String(status.st_mode & 0o7777, radix: 8))); "
                    + "make it writable (chmod u+w) or name another dataset")
        }
        let file = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw EvalError("cannot add to \(path): \(String(cString: strerror(errno)))") }
        defer { close(file) }
        guard fstat(file, &status) == 0 else {
            throw EvalError("cannot add to \(path): \(String(cString: strerror(errno)))")
        }
        let length = status.st_size
        var bytes = Array(line.utf8)
        if length > 0 {
            var last: UInt8 = 0
            guard pread(file, &last, 1, length - 1) == 1 else {
                throw EvalError("cannot read the end of \(path): \(String(cString: strerror(errno)))")
            }
            if last != UInt8(ascii: "\n") { bytes.insert(UInt8(ascii: "\n"), at: 0) }
        }
        let written = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            let reason =
                written < 0 ? String(cString: strerror(errno)) : "only \(written) of \(bytes.count) bytes written"
            _ = ftruncate(file, length)
            throw EvalError("cannot add to \(path): \(reason); the file is as it was")
        }
    }

    /// Writes `text` to `path` through a temporary file beside it and a rename.
    static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            if rename(temporary, path) != 0 {
                throw EvalError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
        } catch let error as EvalError {
            unlink(temporary)
            throw error
        } catch {
            unlink(temporary)
            throw EvalError("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Creates `suite` from `like` with its dataset set to `dataset` (true), or checks that the
    /// existing `suite` reads `dataset` (false).
    func ensureSuite(_ suite: String, dataset: String, like: String?) throws -> Bool {
        let datasetPath = URL(fileURLWithPath: dataset).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: suite) {
            let loaded = try SuiteParser.parse(try Self.read(suite), file: suite)
            guard loaded.dataset.path == datasetPath else {
                throw EvalError("suite \(suite) reads \(loaded.dataset.path), not \(dataset): name another suite file")
            }
            return false
        }
        guard let like else {
            throw EvalError("suite \(suite) does not exist: give --like SUITE to take its target and scorers from")
        }
        let yaml = try SuiteParser.derived(
            from: try Self.read(like), file: like, as: suite, dataset: datasetPath,
            description:
                "Kept with loupe dataset add; target and scorers as in \((like as NSString).lastPathComponent).")
        try Self.replace(suite, with: "# Made by loupe dataset add from \(like).\n" + yaml)
        _ = try SuiteParser.parse(try Self.read(suite), file: suite)
        return true
    }

    static func read(_ path: String) throws -> String {
        do { return try TextFile.read(path) } catch { throw EvalError("\(error)") }
    }
}
