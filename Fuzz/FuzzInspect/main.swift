import CFuzzDriver
import Foundation
import LoupeAgents

// libFuzzer calls this once per input. A thrown error is a rejected input; only a trap or an
// AddressSanitizer report is a crash.
var argumentCount = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argumentCount, &arguments) { start, count in
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        // The importer reads the `.eval` zip when the bytes start with a zip signature, JSON otherwise.
        _ = try? InspectImporter.traces(data, file: "fuzz.eval")
        return 0
    })
