import Foundation
import LoupeStore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `loupe serve --openai-port` on the real SmolLM2 whose completion traces cannot be stored: the
/// requests join a caller's trace (`traceparent`) whose stored `metadata_json` was damaged by
/// hand (a raw `UPDATE` on the workspace the server writes). The answers still come; the
/// traces that were lost are logged once as a warning and counted when the server stops.
@Suite(.serialized) struct CompletionTraceNotRecordedTests {
    static let caller = "4bf92f3577b34da6a3ce929d0e0e4736"

    /// POSTs a two-token chat completion under the caller's trace; its HTTP status.
    static func ask(_ baseURL: String) throws -> Int {
        var request = URLRequest(url: try #require(URL(string: baseURL + "/chat/completions")))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("00-\(caller)-00f067aa0ba902b7-01", forHTTPHeaderField: "traceparent")
        request.httpBody = Data(
            #"{"model":"\#(OpenAIPeerTests.model)","messages":[{"role":"user","content":"Hi"}],"max_tokens":2}"#.utf8)
        request.timeoutInterval = 600
        let answered = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var status: Int?
        URLSession.shared.dataTask(with: request) { _, response, _ in
            status = (response as? HTTPURLResponse)?.statusCode
            answered.signal()
        }.resume()
        answered.wait()
        return try #require(status, "no answer from \(baseURL)")
    }

    @Test func tracesThatCannotBeStoredAreCountedAndTheFirstIsLogged() throws {
        let path = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let stopped = try OpenAIPeerTests.withServer([], workspace: path) { server, baseURL in
            // The first request makes the caller's trace; then its metadata is damaged.
            #expect(try Self.ask(baseURL) == 200)
            let tables = try Workspace(path: path).traces
            let id = try #require(try tables.traceSummaries().first { $0.externalID == Self.caller }?.id)
            _ = try tables.database.writeStatements { sql in
                try sql.execute(
                    "UPDATE traces SET metadata_json = ? WHERE id = ?", [.text(#"{"task":"#), .integer(id)])
            }
            for _ in 0..<2 { #expect(try Self.ask(baseURL) == 200, "the answer is sent all the same") }
            return (id, server.stop())
        }
        let (id, (status, output)) = stopped
        #expect(status == 0)
        let located = "unreadable metadata (trace \(id), column metadata_json)"
        let counted = output.split(separator: "\n").filter { $0.hasPrefix("2 completion traces were not recorded: ") }
        #expect(counted.count == 1 && counted.first?.contains(located) == true, "\(output)")
        let warnings = output.split(separator: "\n").filter { $0.contains("a completion trace was not recorded") }
        #expect(warnings.count == 1 && warnings.first?.contains("warning") == true, "\(output)")
        #expect(warnings.first?.contains(located) == true, "\(output)")
    }
}
