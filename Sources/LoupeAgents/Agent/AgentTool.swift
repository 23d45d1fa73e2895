import Foundation
import LoupeBase

/// What a tool call gives back: the text the model reads, and spans for the work the call did
/// (a MiniLM forward pass and its layers), which the runner nests under the call's own span.
package struct ToolOutput: Sendable {
    package var text: String
    /// Ids local to the call (the runner prefixes them with the call's span id), a nil parent
    /// for the spans directly under the call, and times in nanoseconds from the call's start.
    package var spans: [TraceSpan]

    package init(_ text: String, spans: [TraceSpan] = []) {
        self.text = text
        self.spans = spans
    }
}

/// A tool the agent can call: its spec for the model and the function that runs it. A thrown
/// error goes back to the model as the tool's result ("error: …"); the run goes on.
package struct AgentTool: Sendable {
    package var spec: ToolSpec
    package var perform: @Sendable (JSONValue) throws -> ToolOutput

    /// A tool whose calls give back text alone.
    package init(spec: ToolSpec, run: @escaping @Sendable (JSONValue) throws -> String) {
        self.spec = spec
        self.perform = { ToolOutput(try run($0)) }
    }

    /// A tool whose calls may also give back spans of the work they did.
    package init(spec: ToolSpec, perform: @escaping @Sendable (JSONValue) throws -> ToolOutput) {
        self.spec = spec
        self.perform = perform
    }

    /// `final_answer`: ends the run with the answer (and the ids it cites).
    package static let finalAnswer = AgentTool(
        spec: ToolSpec(
            name: "final_answer",
            description: "Give the final answer to the question, citing the chunk ids it rests on.",
            parameters: .object([
                "type": "object",
                "properties": .object([
                    "answer": .object(["type": "string"]),
                    "citations": .object(["type": "array", "items": .object(["type": "integer"])]),
                ]),
                "required": .array(["answer"]),
            ])),
        run: { arguments in arguments["answer"]?.text ?? "" })

    /// `calculator`: the safe expression parser.
    package static let calculator = AgentTool(
        spec: ToolSpec(
            name: "calculator",
            description:
                "Evaluate an arithmetic expression with numbers: + - * / % ^, parentheses, sqrt, log, exp, sin, cos.",
            parameters: .object([
                "type": "object", "properties": .object(["expression": .object(["type": "string"])]),
                "required": .array(["expression"]),
            ])),
        run: { arguments in
            guard let expression = arguments["expression"]?.string else {
                throw Calculator.Failure(message: "missing argument 'expression'")
            }
            return Calculator.format(try Calculator.evaluate(expression))
        })
}
