import Foundation

/// Files found in a list of folders, as the panels look for notebooks and suites.
package enum DirectoryListing {
    /// Files in `directories` whose names end in one of `suffixes`, sorted within each directory,
    /// each file once however many of the directories reach it (symbolic links resolved). A
    /// folder that does not exist is skipped.
    package static func files(in directories: [String], suffixes: [String]) -> [String] {
        var seen = Set<String>()
        var found: [String] = []
        for directory in directories {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            for file in files where suffixes.contains(where: file.hasSuffix) {
                let path = directory + "/" + file
                let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
                if seen.insert(canonical).inserted { found.append(path) }
            }
        }
        return found
    }
}
