import Foundation

/// Files found in a list of folders, as the panels look for notebooks and suites.
package enum DirectoryListing {
    /// Files in `directories` whose names end in one of `suffixes`, sorted within each directory,
    /// each file once however many of the directories reach it (symbolic links resolved). With
    /// `firstByName`, a name is listed once, from the first folder that holds it (a working
    /// directory's `notebooks/` beside the checkout's: each notebook once, not twice). A folder
    /// that does not exist is skipped.
    package static func files(in directories: [String], suffixes: [String], firstByName: Bool = false) -> [String] {
        var seen = Set<String>()
        var names = Set<String>()
        var found: [String] = []
        for directory in directories {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            for file in files where suffixes.contains(where: file.hasSuffix) {
                let path = directory + "/" + file
                let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
                guard seen.insert(canonical).inserted else { continue }
                if firstByName, !names.insert(file).inserted { continue }
                found.append(path)
            }
        }
        return found
    }
}
