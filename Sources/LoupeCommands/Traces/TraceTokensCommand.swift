import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore

extension TraceCommand {
    /// `loupe trace tokens TRACE [--span S] [--json]`: what a local model generated in a trace,
    /// token by token, with how sure it was and what else it considered, so the token where an
    /// agent went wrong can be found on the shell as in the Traces panel.
    struct Tokens: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A local model's generated tokens in a trace: probabilities, alternatives, near-ties.",
            discussion: """
                For each span that carries generated tokens (loupe.llm.tokens, or the serving endpoint's \
                older loupe.response.tokens), or the one --span names, every token with its probability \
                (exp of the model's log-probability, before temperature and filters) and its most likely \
                alternatives. A token is marked `low` when its probability is below \
                \(Self.lowConfidence) and `tie` when the two most likely alternatives are less than \
                \(Self.nearTie) apart: the places the model could easily have gone another way.
                """)

        /// Below this probability a chosen token is marked low-confidence (the Traces panel's too).
        static let lowConfidence = GeneratedTokens.Token.lowConfidence
        /// Below this gap between the two most likely alternatives' probabilities a position is a near-tie.
        static let nearTie = GeneratedTokens.Token.nearTie

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The trace's id (loupe trace list).") var id: Int64
        @Option(help: "Only this span: its id or its ordinal (loupe trace show --json).") var span: String?
        @Flag(help: "Print JSON.") var json = false

        /// One span's generated tokens, one sequence per choice.
        typealias Found = TraceService.TokenSpan

        func run(in context: CommandContext) throws {
            let service = TraceService(tables: try context.traceTables(access: .read))
            // Found and decoded in Kit, where the MCP server's trace_tokens tool reads them too.
            let found: [Found]
            do {
                found = try service.generatedTokens(trace: id, span: span)
            } catch let error as TraceImportError {
                throw CommandFailure(error.description)
            } catch let error as TraceService.TokensError {
                throw CommandFailure(error.description)
            }
            if json { return context.print(JSONValue.array(found.map(\.json)).prettyJSON) }
            guard !found.isEmpty else {
                let which = span.map { "span \(UntrustedText.sanitized($0)) of trace \(id)" } ?? "trace \(id)"
                return context.print("\(which) has no generated tokens (only a local model's steps record them)")
            }
            for (index, item) in found.enumerated() {
                if index > 0 { context.print("") }
                for line in Self.lines(item) { context.print(line) }
            }
        }

        /// A token's text as one quoted display cell: control characters made visible.
        static func quoted(_ text: String) -> String { "\"" + UntrustedText.sanitized(text) + "\"" }

        static func lines(_ item: Found) -> [String] {
            let row = item.row
            var lines: [String] = []
            for (choice, sequence) in item.sequences.enumerated() {
                let low = sequence.tokens.filter(\.isLowConfidence).count
                let ties = sequence.tokens.filter(\.isNearTie).count
                lines.append(
                    "span \(row.ordinal) (\(UntrustedText.sanitized(row.spanID))) "
                        + TextWidth.truncate(UntrustedText.sanitized(row.name), toColumns: 50)
                        + (item.sequences.count > 1 ? ", choice \(choice + 1) of \(item.sequences.count)" : "")
                        + ": \(Formatting.count(sequence.tokens.count, "token")), \(low) low, "
                        + "\(Formatting.count(ties, "near-tie"))")
                lines.append("      #      p  mark      token                 alternatives")
                for (position, token) in sequence.tokens.enumerated() {
                    let mark = [token.isLowConfidence ? "low" : "", token.isNearTie ? "tie" : ""].filter { !$0.isEmpty }
                        .joined(separator: ",")
                    let alternatives = token.alternatives.map {
                        quoted($0.text) + " " + String(format: "%.3f", $0.probability)
                    }.joined(separator: "  ")
                    lines.append(
                        String(position).leftPadded(to: 7) + "  " + String(format: "%.3f", token.probability) + "  "
                            + mark.padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                            + TextWidth.truncate(quoted(token.text), toColumns: 20)
                            .padding(toLength: 20, withPad: " ", startingAt: 0)
                            + "  " + alternatives)
                }
            }
            return lines
        }
    }
}
