import LoupeAgents
import LoupeBase
import Testing

/// The message a malformed trace file gets: where (file, then line or part), the field, and why.
@Suite struct TraceImportErrorTests {
    @Test(arguments: [
        (TraceImportError(file: "a.json", "cannot be read"), "a.json: cannot be read"),
        (
            TraceImportError(file: "x.jsonl", line: 4, field: "resourceSpans", "missing"),
            "x.jsonl:4: resourceSpans: missing"
        ),
        (
            TraceImportError(file: "x.eval", part: "header.json", field: "eval", "missing"),
            "x.eval:header.json: eval: missing"
        ),
        (TraceImportError(file: "trace 3", part: "span 7", "no such span"), "trace 3:span 7: no such span"),
    ])
    func saysWhereAndWhy(error: TraceImportError, message: String) {
        #expect(error.description == message)
    }
}
