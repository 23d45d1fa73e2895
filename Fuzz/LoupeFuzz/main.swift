import CFuzzDriver
import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeModels
import LoupeOTLP
import LoupeProfiling
import LoupeRetrieval

/// The decoders under fuzzing, by the name `scripts/fuzz` passes first on the command line. Each
/// body decodes one input the way Loupe reads such a file; a thrown error is a rejected input,
/// and only a trap or a sanitizer report is a crash.
private let targets: [String: @Sendable (Data) -> Void] = [
    "json-value": { _ = try? JSONValue.parse($0) },
    "otlp": { _ = try? OTLPImporter.traces($0, file: "fuzz.json") },
    // The importer reads the `.eval` zip when the bytes start with a zip signature, JSON otherwise.
    "inspect": { _ = try? InspectImporter.traces($0, file: "fuzz.eval") },
    "chat-messages": { _ = try? ChatMessages.traces($0, file: "fuzz.jsonl") },
    "swe-agent": { _ = try? SWEAgentImporter.traces($0, file: "fuzz.traj") },
    // Format detection and dispatch, as `loupe trace import` does it.
    "trace-import": { _ = try? TraceImport.traces($0, file: "fuzz.json") },
    "nsight-compute": { _ = try? NsightComputeImport.parse(text($0), file: "fuzz.csv") },
    "safetensors": safeTensors,
    "suite": { _ = try? SuiteParser.parse(text($0), file: "fuzz.yaml") },
    "dataset": { _ = try? Dataset.items($0, spec: DatasetSpec(path: "fuzz.jsonl")) },
    "qrels": { _ = try? Qrels.parse(text($0), file: "fuzz.qrels") },
    "theme": { _ = try? ThemeLoader.parse(text($0), file: "fuzz.toml", name: "fuzz") },
    "notebook": { _ = Notebook.parse(text($0)) },
    // What the OTLP receiver reads from a request body: protobuf, JSON, and gzip around either.
    "otlp-protobuf": { _ = try? OTLPDecoding.protobuf($0) },
    "otlp-request": { _ = try? OTLPDecoding.json($0) },
    "gzip": { _ = try? Gzip.decompress($0, limit: 1 << 20) },
]

/// The text readers take what `TextFile` would hand them: the bytes as UTF-8, repaired.
private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// `SafeTensors` maps a path, so each input goes through one scratch file per process.
private let scratchPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).safetensors"
private func safeTensors(_ data: Data) {
    guard FileManager.default.createFile(atPath: scratchPath, contents: data) else { return }
    _ = try? SafeTensors(path: scratchPath)
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
