import Foundation
import LoupeBase
import LoupeProfiling
import Testing

@Suite struct KinetoReaderTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/kineto")

    /// A trace written to a temporary file (gzipped when `gzip`), read back.
    private func readText(
        _ text: String, gzip: Bool = false, chunkBytes: Int = 8 << 20
    ) throws -> (info: KinetoFileInfo, events: [ProfileEvent], names: ProfileNames) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kineto-\(UUID().uuidString).json" + (gzip ? ".gz" : ""))
        defer { try? FileManager.default.removeItem(at: url) }
        let data = Data(text.utf8)
        try (gzip ? Gzip.compress(data) : data).write(to: url)
        return try read(url.path, chunkBytes: chunkBytes)
    }

    private func read(_ path: String, chunkBytes: Int = 8 << 20) throws -> (
        info: KinetoFileInfo, events: [ProfileEvent], names: ProfileNames
    ) {
        var names = ProfileNames()
        var events: [ProfileEvent] = []
        let info = try KinetoReader.read(path, names: &names, chunkBytes: chunkBytes) { events += $0 }
        return (info, events, names)
    }

    private func failure(_ text: String, gzip: Bool = false) -> ProfileReadError? {
        do {
            _ = try readText(text, gzip: gzip)
            return nil
        } catch let error as ProfileReadError {
            return error
        } catch {
            Issue.record("not a ProfileReadError: \(error)")
            return nil
        }
    }

    /// A real trace read in chunks of a few bytes (events cut anywhere, numbers split across
    /// chunks) gives exactly the events read in one chunk.
    @Test(arguments: [37, 4096]) func chunkBoundariesChangeNothing(chunkBytes: Int) throws {
        let path = Self.fixtures.appendingPathComponent(
            "alexnet-a100/benchmark_result_2869224_1695835535_trace.json.gz"
        )
        .path
        let whole = try read(path)
        let chunked = try read(path, chunkBytes: chunkBytes)
        #expect(whole.events.count == 870)
        #expect(chunked.events == whole.events)
        #expect(chunked.names.names == whole.names.names)
        #expect(chunked.info == whole.info)
        #expect(whole.info.rank == 0)
        #expect(whole.info.passedOver["flow"] == 500)
        #expect(whole.info.threadNames.values.contains { $0.hasPrefix("stream 7") })
    }

    /// Epoch microseconds with nanosecond fractions are kept to the nanosecond (a Double would
    /// lose them); a GPU event's stream is its `args.stream`.
    @Test func timesAreExactNanosecondsAndStreamsComeFromArgs() throws {
        let got = try readText(
            #"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 9, "ts": 1712195498123456.789, "dur": 2.5, "args": {"stream": 7, "correlation": 42, "External id": 3}}]}"#
        )
        let event = try #require(got.events.first)
        #expect(event.start == 1_712_195_498_123_456_789)
        #expect(event.duration == 2_500)
        #expect(event.tid == 7)
        #expect(event.correlation == 42)
        #expect(event.externalID == 3)
        #expect(event.kind == .kernel)
        #expect(got.names[event.name] == "k")
    }

    /// `B`/`E` pairs become one event; the JSON Array Format (no wrapping object) reads too;
    /// string pids are names; unknown phases are counted, not stored.
    @Test func beginEndPairsArraysAndUnknownPhases() throws {
        let got = try readText(
            #"[{"ph":"B","name":"step","cat":"user_annotation","pid":"main","tid":1,"ts":10},{"ph":"q","name":"odd","ts":11},{"ph":"E","pid":"main","tid":1,"ts":15.5},{"ph":"i","name":"mark","cat":"cpu_instant_event","pid":1,"tid":1,"ts":12}]"#
        )
        #expect(got.events.count == 2)
        let step = try #require(got.events.first { got.names[$0.name] == "step" })
        #expect(step.start == 10_000 && step.duration == 5_500 && step.kind == .annotation)
        #expect(step.pid < 0 && got.names[Int32(-step.pid - 1)] == "main")
        #expect(got.info.passedOver == ["unknown ph \"q\"": 1])
    }

    @Test func badEventsNameTheFileAndTheEvent() throws {
        let noTS = failure(#"{"traceEvents":[{"ph":"X","name":"a","dur":1,"ts":1},{"ph":"X","name":"b","dur":1}]}"#)
        #expect(noTS?.event == 1)
        #expect(noTS?.message == "the X event has no ts")
        let negative = failure(#"{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":-3}]}"#)
        #expect(negative?.message.contains("negative") == true)
        let unmatched = failure(#"{"traceEvents":[{"ph":"E","pid":1,"tid":1,"ts":5}]}"#)
        #expect(unmatched?.message == "an E event with no B open on its pid and tid")
        let backwards = failure(
            #"{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":5},{"ph":"E","pid":1,"tid":1,"ts":4}]}"#)
        #expect(backwards?.event == 1)
        #expect(backwards?.message.contains("earlier than its B") == true)
        let badArgs = failure(#"{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1,"args":{"x":[1,]}}]}"#)
        #expect(badArgs?.message.contains("args") == true)
    }

    /// A file cut inside an event (a profiler killed mid-write) says so and where.
    @Test(arguments: [false, true]) func aTraceCutShortIsAnError(gzip: Bool) throws {
        let text = #"{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1},{"ph":"X","name":"b","ts":2,"#
        let error = try #require(failure(text, gzip: gzip))
        #expect(error.message == "the file ends inside traceEvents")
        #expect(error.event == 1)
        #expect(error.description.contains("traceEvents[1]"))
    }

    /// A gzip stream cut short is an error, not a short trace.
    @Test func aTruncatedGzipIsAnError() throws {
        let source = Self.fixtures.appendingPathComponent("amd-mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
        let packed = try Data(contentsOf: source)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString).json.gz")
        defer { try? FileManager.default.removeItem(at: url) }
        try packed.prefix(packed.count / 2).write(to: url)
        #expect {
            _ = try read(url.path)
        } throws: { error in
            "\(error)".contains("gzip stream is damaged") || "\(error)".contains("ends inside traceEvents")
        }
    }

    @Test func syntaxErrorsSayWhere() throws {
        let error = try #require(failure(#"{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1} {"ph":"X"}]}"#))
        #expect(error.message == "expected ',' or ']' after an event")
        #expect(error.event == 1)
        #expect(error.byteOffset == 53)
        let notJSON = try #require(failure("hello"))
        #expect(notJSON.message == "the trace is no JSON object or array")
        let empty = try #require(failure("  "))
        #expect(empty.message == "the file is empty")
    }

    /// A torch.profiler CPU trace made here (scripts/reference/torch_cpu_trace.py) reads whole:
    /// its ProfilerStep annotations, CPU operators, memory instants.
    @Test func aTorchProfilerCPUTraceReads() throws {
        let got = try read(Self.fixtures.appendingPathComponent("cpu-mlp-step.json.gz").path)
        let steps = got.events.filter { got.names[$0.name].hasPrefix("ProfilerStep#") }
        #expect(steps.count == 3)
        #expect(got.events.contains { $0.kind == .cpuOp && got.names[$0.name] == "aten::addmm" })
        #expect(got.events.allSatisfy { $0.duration >= 0 })
        #expect(got.info.events == got.events.count)
    }
}
