/// A notebook found on disk, as the Notebooks panel lists it.
package struct NotebookSummary: Hashable, Sendable {
    package var path: String
    package var title: String
    package var cellCount: Int

    package init(path: String, title: String, cellCount: Int) {
        self.path = path
        self.title = title
        self.cellCount = cellCount
    }
}
