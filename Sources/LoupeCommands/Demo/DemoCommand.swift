import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeStore

/// `loupe demo build SCRIPT`: runs a script of Loupe command lines on the workspace and keeps in
/// the workspace how far it got, so a run that was stopped (the TUI quit, ctrl-c) continues at
/// the command it was on. `scripts/setup` builds the demo workspace's quick part this way before
/// the first frame, and the TUI builds the rest as a job.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build the demo workspace from a script of commands, resumably.",
        subcommands: [Build.self]
    )

    struct Build: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a script's command lines on the workspace, continuing where an earlier run stopped.",
            discussion: """
                SCRIPT holds one Loupe command a line, as in `loupe repl` (blank lines and lines \
                starting with # are skipped); a line `if smollm2: COMMAND` runs COMMAND only where \
                that model has been fetched (else it says so and goes on). After each command the workspace remembers how many \
                ran (setting demo.done:<file name>), so running the same script again continues at \
                the first command that did not finish; --from-start runs them all again. A \
                `sae train` that was stopped part way is continued with --resume rather than \
                started over.
                """
        )

        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The script of command lines.", valueName: "script")) var script: String
        @Flag(help: "Run every command again, from the first.") var fromStart = false

        func run(in context: CommandContext) throws {
            let text: String
            do {
                text = try TextFile.read(script)
            } catch {
                throw CommandFailure("\(error) (run from the repository root, or give its path)")
            }
            let commands = DemoScript.commands(in: text)
            let name = (script as NSString).lastPathComponent
            let workspace = try context.workspace()
            let doneKey = "demo.done:" + name
            let startedKey = "demo.started:" + name
            let done = fromStart ? 0 : (try workspace.settings.setting(doneKey)).flatMap { Int($0) } ?? 0
            guard done < commands.count else {
                context.print("\(name): all \(commands.count) commands already ran in this workspace")
                return
            }
            // A command that started and did not finish was stopped part way.
            let interrupted = fromStart ? nil : (try workspace.settings.setting(startedKey)).flatMap { Int($0) }
            let executor = CommandExecutor(session: context.session, isInsideTUI: false)
            for index in done..<commands.count {
                try context.reporter.checkCancellation()
                var line = commands[index].line
                if interrupted == index {
                    line = try DemoScript.continuation(
                        of: line, saes: SAEBrowser(workspace: workspace, models: context.session.models))
                }
                context.reporter.report(
                    JobProgress(
                        completed: Double(index), total: Double(commands.count),
                        detail: "\(name) \(index + 1)/\(commands.count): \(line)"))
                try workspace.settings.setSetting(startedKey, to: String(index))
                if let (model, command) = DemoScript.condition(of: line) {
                    guard let requirement = DemoScript.requirements[model] else {
                        throw CommandFailure(
                            "\(script):\(commands[index].number): unknown model '\(model)' in `if \(model):` "
                                + "(one of \(DemoScript.requirements.keys.sorted().joined(separator: ", ")))")
                    }
                    guard requirement.present(context.session.models) else {
                        context.print(
                            "› skipped (\(model) is not in \(context.session.models.root); \(requirement.fetch)): \(command)"
                        )
                        try workspace.settings.setSetting(doneKey, to: String(index + 1))
                        continue
                    }
                    line = command
                }
                context.print("› " + line)
                let outcome = executor.execute(line, reporter: context.reporter, columns: context.columns)
                context.output.write(outcome.output)
                // A stopped command may print a partial result and return: it is not done.
                try context.reporter.checkCancellation()
                if let error = outcome.error {
                    throw CommandFailure("\(script):\(commands[index].number): \(line): \(error)")
                }
                try workspace.settings.setSetting(doneKey, to: String(index + 1))
            }
            context.print("\(name): \(commands.count - done) of \(commands.count) commands ran")
        }
    }
}
