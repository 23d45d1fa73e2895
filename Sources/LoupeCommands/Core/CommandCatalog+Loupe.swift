import ArgumentParser
import Foundation
import LoupeKit

extension CommandCatalog {
    /// The catalog of the whole Loupe command tree, read from ArgumentParser's own description
    /// of it (`--experimental-dump-help`), so it can never disagree with the parser.
    package static func loupe(excludingTUIOnly: Bool) -> CommandCatalog {
        let json: String
        do {
            _ = try Loupe.parseAsRoot(["--experimental-dump-help"])
            return CommandCatalog(entries: [])
        } catch {
            json = Loupe.fullMessage(for: error)
        }
        // ArgumentParser's dump is its own format: a version that changed it leaves the palette
        // empty, and CommandExecutorTests (which looks for known commands in it) fails.
        guard let info = try? JSONDecoder().decode(DumpedTool.self, from: Data(json.utf8)) else {
            return CommandCatalog(entries: [])
        }
        var entries: [Entry] = []
        func visit(_ command: DumpedCommand, path: [String]) {
            if !path.isEmpty {
                let arguments = (command.arguments ?? []).filter { $0.shouldDisplay ?? true }
                let options = arguments.flatMap { argument -> [String] in
                    (argument.names ?? []).compactMap { name in
                        switch name.kind {
                        case "long": return "--" + name.name
                        case "short": return "-" + name.name
                        case "longWithSingleDash": return "-" + name.name
                        default: return nil
                        }
                    }
                }
                let needsArguments = arguments.contains { !$0.isOptional && $0.kind != "flag" }
                entries.append(
                    Entry(
                        path: path, abstract: command.abstract ?? "",
                        options: options.filter { $0 != "--help" && $0 != "-h" }, needsArguments: needsArguments,
                        isGroup: !(command.subcommands ?? []).isEmpty))
            }
            for subcommand in command.subcommands ?? [] where subcommand.shouldDisplay ?? true {
                if excludingTUIOnly, path.isEmpty, ["repl"].contains(subcommand.commandName) { continue }
                visit(subcommand, path: path + [subcommand.commandName])
            }
        }
        visit(info.command, path: [])
        return CommandCatalog(entries: entries)
    }
}

// The parts of ArgumentParser's ToolInfo JSON the catalog reads.
private struct DumpedTool: Decodable {
    var command: DumpedCommand
}

private struct DumpedCommand: Decodable {
    var commandName: String
    var abstract: String?
    var shouldDisplay: Bool?
    var arguments: [DumpedArgument]?
    var subcommands: [DumpedCommand]?
}

private struct DumpedArgument: Decodable {
    var kind: String
    var isOptional: Bool
    var shouldDisplay: Bool?
    var names: [DumpedName]?
}

private struct DumpedName: Decodable {
    var kind: String
    var name: String
}
