import Foundation
import LoupeBench
import LoupeCommands
import LoupeKit

// The composition root: the benches added to the command tree, one model library for the
// process, the TUI as the command language's host, then the command line decides what runs.
Loupe.register([BenchCommand.self])
let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
LoupeCLI.main(models: models, host: LoupeTUIHost())
