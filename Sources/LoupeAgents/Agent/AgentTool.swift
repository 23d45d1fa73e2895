import Foundation
import LoupeBase

/// A tool the agent can call: its spec for the model and the function that runs it. A thrown
/// error goes back to the model as the tool's result ("error: …"); the run goes on.
package struct AgentTool: Sendable {
    package var spec: ToolSpec
    package var run: @Sendable (JSONValue) throws -> String

    package init(spec: ToolSpec, run: @escaping @Sendable (JSONValue) throws -> String) {
        self.spec = spec
        self.run = run
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
