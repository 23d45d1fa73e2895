import LoupeApp
import LoupeKit
import LoupeTUI

/// A deterministic app state for reducer tests and golden frames.
enum AppFixtures {
    static let catalog = CommandCatalog(entries: [
        .init(
            path: ["workspace"], abstract: "Create, inspect, check and compact a workspace file.", options: [],
            needsArguments: false, isGroup: true),
        .init(
            path: ["workspace", "info"],
            abstract: "Show the workspace's path, schema version, sizes and rows per table.",
            options: ["--json", "--workspace"], needsArguments: false, isGroup: false),
        .init(
            path: ["workspace", "init"], abstract: "Create the workspace.", options: ["--workspace"],
            needsArguments: false, isGroup: false),
        .init(
            path: ["notebook", "run"], abstract: "Run notebooks.", options: ["--check"], needsArguments: true,
            isGroup: false),
        .init(
            path: ["theme"], abstract: "List the colour themes, or switch to one.", options: ["--workspace"],
            needsArguments: false, isGroup: false),
    ])

    /// The app on an empty workspace: the Traces panel has loaded its (empty) list.
    static func state(width: Int = 80, height: Int = 24, monochrome: Bool = false) -> AppState {
        var state = AppState(
            size: Size(width: width, height: height), theme: .builtInDefault, forceMonochrome: monochrome,
            panels: AppState.standardPanels(), workspaceName: "demo.sqlite", catalog: catalog,
            themeNames: ["default", "high-contrast", "light", "mono"], history: ["theme light", "workspace info"]
        )
        _ = state.update(answer(TracesPanel.ListTraces(), []))
        return state
    }

    static let notebooks = [
        NotebookSummary(path: "notebooks/getting-started.md", title: "Getting started", cellCount: 7),
        NotebookSummary(path: "notebooks/roofline.md", title: "Roofline: where the time goes", cellCount: 5),
    ]

    static let notebookText = """
        # Getting started

        Loupe keeps everything in a workspace.

        ```loupe
        workspace init
        ```

        ```output
        created workspace scratch.sqlite (schema v1)
        ```

        Check it:

        ```loupe
        workspace check
        ```

        ```output
        integrity     ok
        foreign keys  ok
        ```
        """

    /// The message a panel's port sends when it answers `request` with `value`.
    static func answer<Request: PortRequest>(_ request: Request, _ value: Request.Answer) -> Msg {
        .answered(PortAnswer(request, .loaded(value)))
    }

    /// The message a panel's port sends when `request` fails with `message`.
    static func failure<Request: PortRequest>(_ request: Request, _ message: String) -> Msg {
        .answered(PortAnswer(request, .failed(message)))
    }

    /// The port requests of type `Request` among `effects`, in order.
    static func requests<Request: PortRequest>(_ type: Request.Type, in effects: [Effect]) -> [Request] {
        effects.compactMap { $0.request(as: type) }
    }

    /// Runs the port requests among `effects` on `ports` as the runtime would (synchronously
    /// here), feeding each answer back, until no request is left; other effects are dropped.
    static func settle(_ effects: [Effect], _ state: inout AppState, ports: Ports) {
        state.settle(effects, ports: ports)
    }

    /// Presses keys in order and returns every effect.
    @discardableResult
    static func press(_ keys: [Key], on state: inout AppState) -> [Effect] {
        keys.flatMap { state.update(.input(.key($0))) }
    }

    @discardableResult
    static func type(_ text: String, on state: inout AppState) -> [Effect] {
        press(text.map { Key.character($0) }, on: &state)
    }
}
