import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeStore

/// `loupe session list|show`: traces grouped into sessions (conversations, threads, an Inspect
/// sample's epochs), as the Traces panel's Sessions view shows them.
struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Traces grouped into sessions by session.id, gen_ai.conversation.id, a thread or an eval sample.",
        subcommands: [List.self, Show.self])

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every session with its turns, duration, tokens, cost and errors, the latest first.")

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let sessions = try TraceService(tables: try context.traceTables(access: .read)).sessions()
            if json { return context.print(try Formatting.json(sessions.map(Shown.init))) }
            guard !sessions.isEmpty else {
                return context.print(
                    "no sessions: no trace carries session.id, gen_ai.conversation.id or a thread id")
            }
            context.print("turns  steps  errors   duration    tokens in/out       cost  session")
            for s in sessions {
                context.print(
                    String(format: "%5d %6d %7d  ", s.turns.count, s.steps, s.errorCount)
                        + TraceText.duration(s.durationNs).leftPadded(to: 9) + "  "
                        + Self.tokens(s.inputTokens, s.outputTokens).leftPadded(to: 15) + "  "
                        + TraceText.cost(s.cost).leftPadded(to: 9) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(s.id), toColumns: 50)
                        + (s.isLive() ? "  ● live" : ""))
            }
        }

        static func tokens(_ input: Int?, _ output: Int?) -> String {
            input == nil && output == nil
                ? "—" : "\(input.map(String.init) ?? "—")/\(output.map(String.init) ?? "—")"
        }
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "A session's turns in order, each with its trace id.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The session's id (loupe session list).") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            guard let s = try TraceService(tables: try context.traceTables(access: .read)).session(id) else {
                throw CommandFailure("no session \(UntrustedText.sanitized(id)) (loupe session list shows them)")
            }
            if json { return context.print(try Formatting.json(Shown(s))) }
            context.print(
                "session \(UntrustedText.sanitized(s.id)): \(Formatting.count(s.turns.count, "turn")), "
                    + "\(Formatting.count(s.steps, "step")), \(Formatting.count(s.errorCount, "error")), "
                    + "\(TraceText.duration(s.durationNs)), tokens \(List.tokens(s.inputTokens, s.outputTokens)), "
                    + "cost \(TraceText.cost(s.cost))" + (s.isLive() ? " — ● live" : ""))
            context.print(" turn  trace      start   duration  steps  errors    tokens in/out  name")
            for (n, t) in s.turns.enumerated() {
                context.print(
                    String(format: "%5d  %5lld  ", n + 1, t.id)
                        + TraceText.duration(t.startedNs - s.startedNs).leftPadded(to: 9) + "  "
                        + TraceText.duration(t.timed ? t.durationNs : nil).leftPadded(to: 9)
                        + String(format: " %6d %7d  ", t.stepCount, t.errorCount)
                        + List.tokens(t.inputTokens, t.outputTokens).leftPadded(to: 15) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(t.name), toColumns: 50)
                        + (t.isLive() ? "  ● live" : ""))
            }
        }
    }

    /// A session as JSON: its totals and its turns' trace ids in order.
    struct Shown: Encodable {
        var id: String
        var turns: [Int64]
        var steps: Int
        var errors: Int
        var durationNs: Int64
        var inputTokens: Int?
        var outputTokens: Int?
        var cost: Double?
        var models: [String]
        var live: Bool

        init(_ s: TraceSession) {
            id = s.id
            turns = s.turns.map(\.id)
            steps = s.steps
            errors = s.errorCount
            durationNs = s.durationNs
            inputTokens = s.inputTokens
            outputTokens = s.outputTokens
            cost = s.cost
            models = s.models
            live = s.isLive()
        }
    }
}
