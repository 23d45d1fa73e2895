import ArgumentParser
import LoupeBase

/// Options every command accepts.
package struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The workspace file or postgres:// URL (default: $LOUPE_WORKSPACE, else ./loupe.sqlite).", valueName: "path"
        ))
    package var workspace: String?

    package init() {}
}
