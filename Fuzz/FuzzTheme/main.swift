import CFuzzDriver
import Foundation
import LoupeKit

// libFuzzer calls this once per input. A thrown error is a rejected input; only a trap or an
// AddressSanitizer report is a crash.
var argumentCount = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argumentCount, &arguments) { start, count in
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        _ = try? ThemeLoader.parse(String(decoding: data, as: UTF8.self), file: "fuzz.toml", name: "fuzz")
        return 0
    })
