import Foundation

/// Finds folders of the source checkout a binary was built in (`themes/`, `notebooks/`), so
/// `.build/release/loupe` finds them from any working directory.
package enum CheckoutDirectory {
    /// The first `NAME/` found walking up (at most five levels) from the executable's folder,
    /// holding `marker` when one is given.
    package static func find(_ name: String, containing marker: String? = nil, executablePath: String?) -> String? {
        guard let executablePath else { return nil }
        var directory = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent(name).path
            let probe = marker.map { candidate + "/" + $0 } ?? candidate
            if FileManager.default.fileExists(atPath: probe) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// The running binary's path (`/proc/self/exe`, else the first argument).
    package static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }
}
