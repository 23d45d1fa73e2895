import Foundation
import Glibc
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// `trace import` reads each input once and within its bound: a file that is no trace is refused
/// from its start, one over the limit from its size, and every format reads as it did.
@Suite struct TraceImportBoundsTests {
    private static let samples = KitFixtures.path("sample-data/traces")

    /// Bytes `read(2)` has returned to this thread (`rchar`): the import reads on the caller's
    /// thread, so this bounds what it read of a file.
    private static func bytesReadByThisThread() throws -> Int {
        let text = String(decoding: try TextFile.bytes("/proc/thread-self/io"), as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    private static func sparseFile(bytes: Int) throws -> String {
        let path = try KitFixtures.temporaryDirectory("trace-bounds") + "/sample.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(bytes)) == 0)
        return path
    }

    /// 256 MB of zeros, under the limit, is said to be no trace file from its first megabyte:
    /// before, it was read whole twice (a 1 GB one took 2.1 GB of memory to say so).
    @Test func aFileThatIsNoTraceIsRefusedFromItsStart() throws {
        let path = try Self.sparseFile(bytes: 256 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = try Self.bytesReadByThisThread()
        let error = #expect(throws: TraceImportError.self) { try TraceService.readTraces(path) }
        let read = try Self.bytesReadByThisThread() - before
        #expect(error?.description.contains("not a trace file Loupe reads") == true)
        #expect(read < 4 << 20, "read \(read) bytes of a file refused from its start")
    }

    /// One byte over the limit: refused from the file's size with the limit and how to raise it,
    /// nothing read; the import stores nothing.
    @Test func aFileOverTheLimitIsRefusedFromItsSize() throws {
        let path = try Self.sparseFile(bytes: (8 << 20) + 1)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = try Self.bytesReadByThisThread()
        let error = #expect(throws: FileReadError.self) { try TraceService.readTraces(path, limitBytes: 8 << 20) }
        #expect(try Self.bytesReadByThisThread() - before < 1 << 20)
        #expect(error?.reason == .overInputLimit(bytes: (8 << 20) + 1, limitBytes: 8 << 20, streamed: false))
        #expect(error?.description.contains("Loupe reads inputs up to 8 MB (raise it with --max-input-mb") == true)
    }

    /// Every sample format reads as the whole-file reader reads it, a UTF-8 byte order mark
    /// before the JSON changes nothing, and a file within a limit just its size is read.
    @Test(arguments: [
        "otlp-genai.jsonl", "openai-chat.jsonl", "inspect-arith.json", "inspect-arith.eval", "openai-agents.json",
        "swe-agent-v1.traj", "mini-swe-agent-submitted.traj.json",
    ])
    func everyFormatReadsAsBefore(name: String) throws {
        let path = Self.samples + "/" + name
        let bytes = try TextFile.bytes(path)
        let whole = try TraceImport.traces(Data(bytes), file: path).map { TraceService.record($0, sourceFile: path) }
        let read = try TraceService.readTraces(path, limitBytes: bytes.count).map {
            TraceService.record($0.trace, sourceFile: path, encoded: $0.encoded)
        }
        #expect(read.map(\.contentHash) == whole.map(\.contentHash) && !read.isEmpty)
        guard bytes.first == UInt8(ascii: "{") || bytes.first == UInt8(ascii: "[") else { return }
        let marked = try KitFixtures.temporaryDirectory("trace-bom") + "/" + name
        try Data([0xEF, 0xBB, 0xBF] + bytes).write(to: URL(fileURLWithPath: marked))
        let withMark = try TraceService.readTraces(marked).map {
            TraceService.record($0.trace, sourceFile: path, encoded: $0.encoded)
        }
        #expect(withMark.map(\.contentHash) == whole.map(\.contentHash))
    }

    /// An import whose job is cancelled (SIGINT, SIGTERM) stops before storing and stores nothing.
    @Test func aCancelledImportStoresNothing() throws {
        let workspace = try KitFixtures.workspace("trace-cancel")
        let reporter = JobReporter.detached()
        reporter.cancel()
        #expect(throws: JobCancelled.self) {
            try TraceService(workspace: workspace).importFiles([Self.samples + "/otlp-genai.jsonl"], reporter: reporter)
        }
        #expect(try TraceService(workspace: workspace).list().isEmpty)
    }
}
