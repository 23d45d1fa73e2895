import CFuzzDriver
import Foundation
import LoupeModels

/// The file each input is written to: `SafeTensors` maps a path, so the bytes go through one
/// scratch file per process, rewritten for every input.
private let scratchPath = NSTemporaryDirectory() + "loupe-fuzz-\(getpid()).safetensors"

// libFuzzer calls this once per input. A thrown error is a rejected input; only a trap or an
// AddressSanitizer report is a crash.
var argumentCount = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argumentCount, &arguments) { start, count in
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        guard FileManager.default.createFile(atPath: scratchPath, contents: data) else { return 0 }
        _ = try? SafeTensors(path: scratchPath)
        return 0
    })
