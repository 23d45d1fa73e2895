import ArgumentParser
import CReadline
import Foundation
import Glibc
import LoupeBase
import LoupeKit
import LoupeModels

/// `loupe chat`: a conversation with the local model at a readline prompt.
struct ChatCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Talk with the local model (SmolLM2-135M-Instruct): readline, streaming answers.",
        discussion: """
            Each line you type is a user turn; the model answers with the whole conversation as its \
            prompt (the chat template with its default system turn); the keys and values of the \
            conversation so far are kept, so each turn reads only its new tokens. /system TEXT sets the system \
            turn and starts over, /reset forgets the conversation, /exit (or ctrl+d) leaves; ctrl+c \
            stops an answer. Lines are kept in readline's memory for this session only: nothing you \
            type is written to a history file. With non-terminal input, each line is a turn.
            """)
    static var runsInsideTUI: Bool { false }

    @OptionGroup var global: GlobalOptions
    @Option(help: "The system turn (default: the model's own).") var system: String?
    @OptionGroup var sampling: SamplingFlags

    func run(in context: CommandContext) throws {
        let options = try sampling.options(alternatives: 0)
        let generator = try context.session.models.smolLM2(precision: sampling.precision)
        let interactive = isatty(STDIN_FILENO) == 1
        var system = self.system
        var messages: [ChatMessage] = []
        // The conversation's keys and values: each turn's prompt extends the last one's.
        var promptCache = PromptCache()
        if interactive {
            loupe_rl_set_name("loupe-chat")
            context.print(
                "\(ModelLibrary.smolLM2Name), \(sampling.precision.rawValue). /system TEXT, /reset, /exit; ctrl+c stops an answer."
            )
        }
        while let line = interactive ? ReplCommand.readInteractive("you› ") : readLine(strippingNewline: true) {
            let typed = line.trimmingWhitespace()
            if typed.isEmpty { continue }
            if interactive { add_history(typed) }
            if typed == "/exit" || typed == "/quit" { break }
            if typed == "/reset" {
                messages = []
                promptCache.reset()
                context.print("(the conversation is forgotten)")
                continue
            }
            if typed.hasPrefix("/system") {
                let text = typed.dropFirst("/system".count).trimmingWhitespace()
                system = text.isEmpty ? nil : text
                messages = []
                promptCache.reset()
                context.print(
                    system == nil ? "(the model's own system turn, a new conversation)" : "(a new conversation)")
                continue
            }
            messages.append(.user(typed))
            let prompt = try generator.prompt((system.map { [ChatMessage.system($0)] } ?? []) + messages)
            // A reporter per answer: ctrl+c stops this answer, not the next ones.
            let turn = JobReporter.detached()
            let answer: (() throws -> Generation) throws -> Generation = Interrupt.cancelling(
                turn, work: "an answer was being generated", advice: "ask again")
            let generation = try answer {
                try generator.generate(
                    prompt: prompt, options: options, reusing: &promptCache, isCancelled: { turn.isCancelled },
                    onText: { text, _ in context.output.write(terminalSafe(text)) })
            }
            context.print()
            messages.append(.assistant(generation.text))
            if generation.stopReason == .cancelled { context.print("(stopped)") }
        }
    }
}
