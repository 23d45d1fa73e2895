import Foundation
import LoupeCommands
import LoupeKit

// The composition root: one model library for the process, the TUI as the command language's
// host, then the command line decides what runs.
let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
LoupeCLI.main(models: models, host: LoupeTUIHost())
