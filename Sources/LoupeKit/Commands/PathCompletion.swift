import Foundation

/// File and folder names for the `:` line's tab: what a shell completes after a command.
package enum PathCompletion {
    /// The paths that start with `partial` (relative to the current directory, or absolute, or
    /// from `~`), folders with a trailing `/`; hidden files only when `partial`'s last part starts
    /// with a dot. At most `limit`, sorted.
    package static func candidates(for partial: String, limit: Int = 200) -> [String] {
        let slash = partial.lastIndex(of: "/")
        let folder = slash.map { String(partial[...$0]) } ?? ""
        let prefix = slash.map { String(partial[partial.index(after: $0)...]) } ?? partial
        var directory = folder.isEmpty ? "." : folder
        if directory.hasPrefix("~") { directory = NSString(string: directory).expandingTildeInPath }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasPrefix(prefix) && (prefix.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted()
            .prefix(limit).map { name in
                var isFolder: ObjCBool = false
                FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isFolder)
                return folder + name + (isFolder.boolValue ? "/" : "")
            }
    }
}
