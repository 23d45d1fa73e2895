import CFuzzDriver
import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeModels
import LoupeOTLP
import LoupeOpenAI
import LoupeProfiling
import LoupeRetrieval
import LoupeStore

/// The decoders under fuzzing, by the name `scripts/fuzz` passes first on the command line. Each
/// body decodes one input the way Loupe reads such a file; a thrown error is a rejected input,
/// and only a trap or a sanitizer report is a crash.
private let targets: [String: @Sendable (Data) -> Void] = [
    "json-value": { _ = try? JSONValue.parse($0) },
    "otlp": { _ = try? OTLPImporter.traces($0, file: "fuzz.json") },
    // A request too large to parse whole: its structure walked, its spans parsed one by one.
    "otlp-large": { _ = try? OTLPImporter.largeRequest(Array($0), file: "fuzz.json", line: nil) { $0 } },
    // The importer reads the `.eval` zip when the bytes start with a zip signature, JSON otherwise.
    "inspect": { _ = try? InspectImporter.traces($0, file: "fuzz.eval") },
    "chat-messages": { _ = try? ChatMessages.traces($0, file: "fuzz.jsonl") },
    "swe-agent": { _ = try? SWEAgentImporter.traces($0, file: "fuzz.traj") },
    // Format detection and dispatch, as `loupe trace import` does it.
    "trace-import": { _ = try? TraceImport.traces($0, file: "fuzz.json") },
    "nsight-compute": { _ = try? NsightComputeImport.parse(text($0), file: "fuzz.csv") },
    "safetensors": safeTensors,
    // A GGUF model file: header, metadata, tensor infos, then every tensor dequantized.
    "gguf": gguf,
    "suite": { _ = try? SuiteParser.parse(text($0), file: "fuzz.yaml") },
    "rubric": { _ = try? RubricParser.parse(text($0), file: "fuzz.yaml") },
    // Labels made elsewhere, imported into a queue of a scratch workspace.
    "review-labels": reviewLabels,
    "dataset": { _ = try? Dataset.items($0, spec: DatasetSpec(path: "fuzz.jsonl")) },
    "qrels": { _ = try? Qrels.parse(text($0), file: "fuzz.qrels") },
    "theme": { _ = try? ThemeLoader.parse(text($0), file: "fuzz.toml", name: "fuzz") },
    "notebook": { _ = Notebook.parse(text($0)) },
    // What the OTLP receiver reads from a request body: protobuf, JSON, and gzip around either.
    "otlp-protobuf": { _ = try? OTLPDecoding.protobuf($0) },
    "otlp-request": { _ = try? OTLPDecoding.json($0) },
    "gzip": { _ = try? Gzip.decompress($0, limit: 1 << 20) },
    // A profiler trace streamed in tiny chunks, so every value is cut somewhere.
    "kineto": kineto,
    // An Nsight Systems SQLite export, read through SQLite as `profile import` reads it.
    "nsys": nsys,
    // A workspace's BM25 blob: read, laid out for queries (renumbered, in C) and searched.
    "bm25-blob": bm25Blob,
    // What `loupe serve`'s OpenAI endpoint reads from a request body: the JSON, then each field
    // checked, a tool's or response format's JSON schema compiled into a grammar.
    "openai-request": openAIRequest,
    // The W3C `traceparent` header a served request may carry.
    "traceparent": traceParent,
]

/// A header that parses names a trace and a span as the specification writes them.
private func traceParent(_ data: Data) {
    guard let parent = TraceParent(header: text(data)) else { return }
    let hex = Set("0123456789abcdef")
    precondition(parent.traceID.count == 32 && parent.traceID.allSatisfy(hex.contains))
    precondition(parent.spanID.count == 16 && parent.spanID.allSatisfy(hex.contains))
    precondition(parent.traceID.contains { $0 != "0" } && parent.spanID.contains { $0 != "0" })
}

private func openAIRequest(_ data: Data) {
    guard let body = try? JSONValue.parse(data) else { return }
    _ = try? OpenAIRequest(body, kind: .chat, defaultSeed: 0)
    _ = try? OpenAIRequest(body, kind: .completion, defaultSeed: 0)
}

private func bm25Blob(_ data: Data) {
    guard let index = BM25Index(serialized: data) else { return }
    let terms = Array(index.postings.keys.sorted().prefix(4))
    _ = index.search(terms + terms.prefix(1), k: 10)
    _ = index.scores(terms)
}

/// The text readers take what `TextFile` would hand them: the bytes as UTF-8, repaired.
private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// `SafeTensors` maps a path, so each input goes through one scratch file per process.
private let scratchPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).safetensors"
private func safeTensors(_ data: Data) {
    guard FileManager.default.createFile(atPath: scratchPath, contents: data) else { return }
    _ = try? SafeTensors(path: scratchPath)
}

/// `GGUFFile` maps a path too. Each supported tensor is dequantized whole and row by row, and
/// the typed metadata reads a model loader makes are tried, so that every checked size is used.
private let ggufPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).gguf"
private func gguf(_ data: Data) {
    guard FileManager.default.createFile(atPath: ggufPath, contents: data),
        let file = try? GGUFFile(path: ggufPath)
    else { return }
    for key in file.keys {
        _ = try? file.integer(key)
        _ = try? file.float(key)
        _ = try? file.strings(key)
        _ = try? file.integers(key)
    }
    for tensor in file.tensors where (try? file.validateSupported(tensor)) != nil {
        guard let values = try? file.floats(tensor) else { continue }
        var row = [Float](repeating: 0, count: tensor.dimensions[0])
        row.withUnsafeMutableBufferPointer { file.dequantizeRow(tensor, row: tensor.rows - 1, into: $0.baseAddress!) }
        precondition(row[...] == values[(values.count - row.count)...] || values.contains { $0.isNaN })
    }
    _ = try? file.validateSupported()
}

/// `KinetoReader` streams a file, so each input goes through one scratch file per process.
private let kinetoPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).json"
private func kineto(_ data: Data) {
    guard FileManager.default.createFile(atPath: kinetoPath, contents: data) else { return }
    var names = ProfileNames()
    _ = try? KinetoReader.read(kinetoPath, names: &names, chunkBytes: 61) { _ in }
}

/// `NsysReader` opens a database file, so each input goes through one scratch file per process.
/// The seed is a real export (nvFuser's H200 matmul test, `Tests/LoupeProfilingTests/Fixtures/nsys`)
/// cut to 20 rows a table, the tables the reader reads and 512-byte pages: 48 KiB, under the
/// fuzzer's 64 KiB inputs.
private let nsysPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).sqlite"
private func nsys(_ data: Data) {
    guard FileManager.default.createFile(atPath: nsysPath, contents: data) else { return }
    var names = ProfileNames()
    _ = try? NsysReader.read(nsysPath, names: &names) { _ in }
}

/// One workspace per process with a queue over a run's two answers: labels are checked against
/// its items and rubric, and a file whose every line passes is stored.
private let reviewQueue: (ReviewService, ReviewService.Queue)? = {
    let directory = NSTemporaryDirectory() + "loupe-fuzz-review-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let rubric = directory + "/rubric.yaml"
    let options = "[{name: right, key: r, pass: true}, {name: wrong, key: w}]"
    let text = [
        "name: fuzz", "targets: [answer]", "criteria:",
        "  - {name: correct, kind: categorical, options: \(options)}",
        "  - {name: score, kind: numeric, range: [1, 5]}", "  - {name: ok, kind: boolean}",
        "  - {name: note, kind: text}",
    ].joined(separator: "\n")
    try? text.write(toFile: rubric, atomically: true, encoding: .utf8)
    guard let workspace = try? Workspace(path: directory + "/w.sqlite"),
        let run = try? workspace.evals.createEvalRun(
            EvalRunRecord(
                suite: "fuzz", suiteFile: nil, suiteHash: "", datasetHash: "", targetKind: "model", targetJSON: "{}",
                scorersJSON: "[]", epochs: 1, planned: 2, loupeVersion: "fuzz", gitRevision: nil))
    else { return nil }
    for item in ["a", "b"] {
        try? workspace.evals.recordEvalResult(
            EvalResultRecord(
                runID: run, itemID: item, epoch: 1, input: "q", targetsJSON: "[]", output: "x", error: nil,
                latencyMs: nil),
            scores: [])
    }
    let service = ReviewService(workspace: workspace)
    let request = ReviewService.QueueRequest(
        name: "fuzz", rubricPath: rubric, source: "answers run:\(run)", createdBy: "fuzz")
    guard let queue = try? service.createQueue(request) else { return nil }
    return (service, queue)
}()
private let labelsPath = NSTemporaryDirectory() + "loupe-fuzz-labels-\(getpid()).jsonl"
private func reviewLabels(_ data: Data) {
    guard let (service, queue) = reviewQueue, FileManager.default.createFile(atPath: labelsPath, contents: data)
    else { return }
    _ = try? service.importLabels(queue, file: labelsPath)
}

/// libFuzzer's callback is a C function pointer, which captures nothing: the chosen body waits
/// here. It is set once, before the driver starts, and only read after.
nonisolated(unsafe) private var body: (Data) -> Void = { _ in }

var arguments = CommandLine.arguments
guard arguments.count >= 2, let chosen = targets[arguments[1]] else {
    let names = targets.keys.sorted().joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: LoupeFuzz TARGET [libFuzzer flags…]; targets: \(names)\n".utf8))
    exit(2)
}
body = chosen
// libFuzzer sees its own flags only: the target name is taken out of argv.
arguments.remove(at: 1)
var argumentCount = Int32(arguments.count)
var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
exit(
    cArguments.withUnsafeMutableBufferPointer { buffer in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argumentCount, &argv) { start, count in
            body(start.map { Data(bytes: $0, count: count) } ?? Data())
            return 0
        }
    })
