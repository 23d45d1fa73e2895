import ArgumentParser
import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

/// `loupe dataset add`: keep what you saw (an answer, a trace, a step) as a regression item.
struct DatasetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dataset", abstract: "Turn answers, traces and steps into eval dataset items.",
        subcommands: [Add.self])

    struct Add: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Append an item (input, expected output, a link back to its source) to a JSON Lines dataset.",
            discussion: """
                --from answer:RUN/ITEM[/EPOCH] takes an eval answer's input and targets; trace:ID a trace's first \
                user message and last output; step:TRACE/SPAN one step's; session:ID a conversation (every turn but \
                the last as chat messages, the last answer as the expected output). --expected replaces the expected \
                output (say what the right answer is); --expected-note QUEUE takes it from the note an \
                annotator wrote on that answer in a review queue. The item's source (workspace, run, item, \
                epoch, trace, span) is kept with it, so an answer to it links back. --suite FILE creates a \
                suite on the dataset from --like SUITE (its target and scorers), or checks that FILE reads it.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The dataset (JSON Lines; created when missing).") var dataset: String
        @Option(help: "What to keep: answer:RUN/ITEM[/EPOCH], trace:ID, step:TRACE/SPAN or session:ID.") var from:
            String
        @Option(help: "The expected output.") var expected: String?
        @Option(help: "Take the expected output from the note on this answer in a review queue.") var expectedNote:
            String?
        @Option(help: "The item's id (default: the source's).") var id: String?
        @Option(help: "A suite file that runs the dataset (created from --like when missing).") var suite: String?
        @Option(help: "The suite whose target and scorers a new suite takes.") var like: String?
        @Option(name: .customLong("as"), help: "Whose note --expected-note takes (default LOUPE_USER).") var user:
            String?

        func run(in context: CommandContext) throws {
            let source = try EvalCommand.plainly { try EvalService.DatasetSource(from) }
            var expected = self.expected
            if let queueName = expectedNote {
                guard expected == nil else { throw CommandFailure("give --expected or --expected-note, not both") }
                guard case .answer(let run, let item, let epoch) = source else {
                    throw CommandFailure("--expected-note takes a note on an answer: --from answer:RUN/ITEM")
                }
                expected = try ReviewCommand.plainly {
                    try ReviewCommand.service(context, access: .read).note(
                        queue: queueName, key: ReviewService.answerKey(run: run, item: item, epoch: epoch),
                        annotator: try ReviewService.annotator(user))
                }
            }
            let addition = try EvalCommand.plainly {
                try EvalCommand.service(context, access: .read).addToDataset(
                    dataset, from: source, expected: expected, id: id, suite: suite, like: like)
            }
            context.print(
                "\(addition.dataset):\(addition.line): added \(UntrustedText.sanitized(addition.id)) — "
                    + TextWidth.truncate(UntrustedText.sanitized(addition.input), toColumns: 50) + " → "
                    + TextWidth.truncate(
                        UntrustedText.sanitized(addition.expected.joined(separator: " | ")), toColumns: 40))
            if let suite = addition.suite {
                context.print(
                    addition.suiteCreated
                        ? "created \(suite) from \(like ?? "") (loupe eval run \(suite))"
                        : "\(suite) runs it (loupe eval run \(suite))")
            }
        }
    }
}
