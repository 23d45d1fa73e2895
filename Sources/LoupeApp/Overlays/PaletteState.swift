import LoupeKit
import LoupeTUI

/// The command palette: a query over every command and app action.
package struct PaletteState: Hashable, Sendable {
    /// An entry: a command line to run (or prefill, when it needs arguments) or an app action.
    package struct Item: Hashable, Sendable {
        package enum Target: Hashable, Sendable {
            case command(String, needsArguments: Bool)
            case action(AppAction)
        }

        package var title: String
        package var detail: String
        package var target: Target
    }

    package var query = LineEditor()
    package var items: [Item] = []
    package var list = ListState()

    /// The items matching the query, best first, with the matched positions of their titles.
    package func matches() -> [(item: Item, positions: [Int])] {
        var scored: [(item: Item, result: FuzzyMatch.Result, order: Int)] = []
        for (order, item) in items.enumerated() {
            if let result = FuzzyMatch.match(query.text, in: item.title) { scored.append((item, result, order)) }
        }
        scored.sort { $0.result.score != $1.result.score ? $0.result.score > $1.result.score : $0.order < $1.order }
        return scored.map { ($0.item, $0.result.positions) }
    }

    /// Every command of `catalog`, then panel switches, themes and app actions.
    static func items(catalog: CommandCatalog, panels: [String], themes: [String]) -> [Item] {
        var items = [Item(title: "Keys: help for this panel", detail: "?", target: .action(.showHelp))]
        for entry in catalog.entries where !entry.isGroup {
            items.append(
                Item(
                    title: entry.name, detail: entry.abstract,
                    target: .command(entry.name, needsArguments: entry.needsArguments)))
        }
        for (index, title) in panels.enumerated() {
            items.append(
                Item(title: "Go to \(title)", detail: "panel \(index + 1)", target: .action(.focusPanel(index))))
        }
        for theme in themes {
            items.append(
                Item(
                    title: "Theme: \(theme)", detail: "switch the colour theme",
                    target: .command("theme \(theme)", needsArguments: false)))
        }
        items.append(Item(title: "Toggle zoom", detail: "focused pane full screen", target: .action(.toggleZoom)))
        items.append(
            Item(title: "Toggle output pane", detail: "command output and log", target: .action(.toggleOutput)))
        items.append(Item(title: "Quit", detail: "leave loupe", target: .action(.quit)))
        return items
    }
}
