import Foundation
import LoupeAgents
import LoupeBase
import Testing

/// Numbers in trace files that do not fit an Int64 nanosecond clock: each one was a trap
/// ("arithmetic overflow", "Double value cannot be converted to Int64") and must be an error
/// naming the file, the field and the value.
@Suite struct ImportedNumberTests {
    private func inspect(sample: String) -> Data {
        Data(#"{"eval":{"task":"t","model":"m"},"samples":[\#(sample)]}"#.utf8)
    }

    private func importError(_ data: Data, file: String) -> TraceImportError? {
        #expect(throws: TraceImportError.self) { try TraceImport.traces(data, file: file) }
    }

    @Test(arguments: [
        "9999-01-01T00:00:00Z", "2263-01-01T00:00:00Z", "2300-06-01T12:00:00+00:00", "1677-01-01T00:00:00Z",
    ])
    func inspectTimestampOutsideInt64Nanoseconds(_ date: String) {
        let error = importError(inspect(sample: #"{"id":1,"started_at":"\#(date)","events":[]}"#), file: "log.json")
        #expect(error?.description == "log.json:samples[0]: started_at: \(date) is outside the years 1678 to 2261")
    }

    @Test func inspectTimestampsJustInsideTheRangeImport() throws {
        #expect(try InspectImporter.timestamp("2262-01-01T00:00:00Z") == 9_214_646_400_000_000_000)
        #expect(try InspectImporter.timestamp("1678-01-01T00:00:00Z") == -9_214_560_000_000_000_000)
    }

    @Test(arguments: ["1e300", "1e400", "\"NaN\"", "\"inf\""])
    func inspectTotalTimeThatIsNotADuration(_ seconds: String) {
        let error = importError(inspect(sample: #"{"id":1,"total_time":\#(seconds),"events":[]}"#), file: "log.json")
        #expect(error?.description.hasPrefix("log.json:samples[0]: total_time: ") == true)
        #expect(error?.description.contains("is not a time Loupe can hold") == true)
    }

    @Test func inspectWorkingTimeOverflowNamesTheEvent() {
        let sample =
            #"{"id":1,"events":[{"event":"model","timestamp":"2026-01-01T00:00:00Z","working_time":1e300}]}"#
        let error = importError(inspect(sample: sample), file: "log.json")
        #expect(error?.description.hasPrefix("log.json:samples[0]: events[0].working_time: 1e+300 seconds") == true)
    }

    @Test func inspectWorkingTimeThatOverflowsOnlyWhenAddedIsAnError() {
        // Each number fits; their sum does not.
        let sample =
            #"{"id":1,"events":[{"event":"tool","timestamp":"2261-12-31T00:00:00Z","working_time":9e9}]}"#
        let error = importError(inspect(sample: sample), file: "log.json")
        #expect(error?.field == nil)
        #expect(error?.description.contains("events[0].working_time") == true)
    }

    @Test func evalZipReachesTheSameCheck() {
        let header = #"{"eval":{"task":"t","model":"m"}}"#
        let sample = #"{"id":1,"epoch":1,"started_at":"9999-01-01T00:00:00Z","events":[]}"#
        let data = storedZip([("header.json", header), ("samples/1_epoch_1.json", sample)])
        let error = importError(data, file: "log.eval")
        #expect(
            error?.description
                == "log.eval:samples/1_epoch_1.json: started_at: 9999-01-01T00:00:00Z is outside the years 1678 to 2261"
        )
    }

    @Test(arguments: [Data(), Data([0x13, 0x37, 0xC0, 0xDE, 0x7B, 0x22, 0x0A, 0xFF])])
    func evalThatIsNotAZipSaysSo(_ data: Data) {
        let error = importError(data, file: "broken.eval")
        #expect(error?.description.hasPrefix("broken.eval: not a zip archive") == true)
    }

    @Test(arguments: ["1e300", "\"NaN\"", "1e400"])
    func miniSWEAgentTimestampThatIsNotATime(_ seconds: String) {
        let trajectory =
            #"{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"ls","extra":{"timestamp":\#(seconds)}}]}"#
        let error = importError(Data(trajectory.utf8), file: "run.traj.json")
        #expect(error?.description.hasPrefix("run.traj.json:messages[1]: extra.timestamp: ") == true)
    }

    /// Token counts are summed per trace and per run: two of 2^62 overflowed.
    @Test(arguments: ["-5", "4611686018427387904"])
    func inspectTokenCountsOutOfRangeAreErrors(_ count: String) {
        let event =
            #"{"event":"model","timestamp":"2026-01-01T00:00:00Z","output":{"usage":{"input_tokens":\#(count)}}}"#
        let error = importError(inspect(sample: #"{"id":1,"events":[\#(event)]}"#), file: "log.json")
        #expect(
            error?.description.hasPrefix("log.json:samples[0]: events[0].output.usage.input_tokens: \(count)") == true)
    }

    @Test func otlpTokenCountsOutOfRangeAreErrors() {
        let span =
            #"{"traceId":"0123456789abcdef0123456789abcdef","spanId":"0123456789abcdef","name":"chat","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.usage.input_tokens","value":{"intValue":"4611686018427387904"}}]}"#
        let file = #"{"resourceSpans":[{"scopeSpans":[{"spans":[\#(span)]}]}]}"#
        let error = importError(Data(file.utf8), file: "t.json")
        #expect(error?.description.contains("attributes.gen_ai.usage.input_tokens") == true)
        #expect(error?.description.contains("is not a token count") == true)
    }

    /// A zip of stored (uncompressed) members: local headers, central directory, end record.
    private func storedZip(_ members: [(name: String, text: String)]) -> Data {
        var body: [UInt8] = []
        var directory: [UInt8] = []
        func u16(_ value: Int, into bytes: inout [UInt8]) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func u32(_ value: Int, into bytes: inout [UInt8]) {
            u16(value & 0xFFFF, into: &bytes)
            u16(value >> 16 & 0xFFFF, into: &bytes)
        }
        for (name, text) in members {
            let offset = body.count
            let content = Array(text.utf8)
            u32(0x0403_4B50, into: &body)
            for _ in 0..<5 { u16(0, into: &body) }  // version, flags, method 0, time, date
            u32(0, into: &body)  // crc (not checked)
            u32(content.count, into: &body)
            u32(content.count, into: &body)
            u16(name.utf8.count, into: &body)
            u16(0, into: &body)
            body += Array(name.utf8) + content
            u32(0x0201_4B50, into: &directory)
            for _ in 0..<6 { u16(0, into: &directory) }  // versions, flags, method 0, time, date
            u32(0, into: &directory)
            u32(content.count, into: &directory)
            u32(content.count, into: &directory)
            u16(name.utf8.count, into: &directory)
            for _ in 0..<4 { u16(0, into: &directory) }  // extra, comment, disk, internal attributes
            u32(0, into: &directory)
            u32(offset, into: &directory)
            directory += Array(name.utf8)
        }
        var end: [UInt8] = []
        u32(0x0605_4B50, into: &end)
        u16(0, into: &end)
        u16(0, into: &end)
        u16(members.count, into: &end)
        u16(members.count, into: &end)
        u32(directory.count, into: &end)
        u32(body.count, into: &end)
        u16(0, into: &end)
        return Data(body + directory + end)
    }
}
