import Foundation
import LoupeKit
import Testing

/// The Notebooks panel's port on the repository's notebooks/ folder.
@Suite struct NotebooksBrowserTests {
    static let notebooks = KitFixtures.path("notebooks")

    @Test func theRepositorysNotebooksAreListedWithTheirTitles() throws {
        let listed = NotebooksBrowser(directories: [Self.notebooks]).list()
        let started = try #require(listed.first { $0.path.hasSuffix("/getting-started.md") })
        #expect(started.title == "Getting started")
        #expect(started.cellCount > 0)
        let names = listed.map { ($0.path as NSString).lastPathComponent }
        #expect(names == names.sorted() && names.contains("retrieval.md"))
    }

    /// A workspace opened from its checkout's `.demo/` finds the checkout's notebooks whichever
    /// binary opens it (one copied to /tmp finds none beside itself); `--notebooks`'s folders come
    /// first, relative ones from the working directory; an installed binary reads
    /// `share/loupe/notebooks`; each folder is searched once.
    @Test func theDefaultSearchFindsTheWorkspacesCheckoutAndAnInstalledBinarysShare() throws {
        let checkout = try KitFixtures.temporaryDirectory("checkout")
        try FileManager.default.createDirectory(atPath: checkout + "/notebooks", withIntermediateDirectories: true)
        try "# Getting started\n\n```loupe\nworkspace info\n```\n".write(
            toFile: checkout + "/notebooks/getting-started.md", atomically: true, encoding: .utf8)
        let folders = NotebooksBrowser.defaultDirectories(
            environment: ["LOUPE_NOTEBOOKS": "mine:/abs/theirs"], workingDirectory: "/home/me",
            workspacePath: checkout + "/.demo/demo.sqlite", executablePath: "/usr/local/bin/loupe")
        #expect(
            folders == [
                "/home/me/mine", "/abs/theirs", "/home/me/notebooks", checkout + "/.demo/notebooks",
                checkout + "/notebooks", "/usr/local/share/loupe/notebooks",
            ])
        let listed = NotebooksBrowser(directories: folders).list()
        #expect(listed.map(\.path) == [checkout + "/notebooks/getting-started.md"])
        // Started in the checkout itself: its notebooks/ once.
        let inside = NotebooksBrowser.defaultDirectories(
            environment: [:], workingDirectory: checkout, workspacePath: "demo.sqlite", executablePath: nil)
        #expect(inside == [checkout + "/notebooks"])
    }

    @Test func markdownWithoutLoupeCellsIsNotANotebook() throws {
        let directory = try KitFixtures.temporaryDirectory("notebooks")
        try "# Notes\n\n```sh\nls\n```\n".write(toFile: directory + "/notes.md", atomically: true, encoding: .utf8)
        try "```loupe\nworkspace info\n```\n".write(
            toFile: directory + "/untitled.md", atomically: true, encoding: .utf8)
        let listed = NotebooksBrowser(directories: [directory, directory + "/missing"]).list()
        #expect(listed.map(\.title) == ["untitled.md"])
        #expect(listed.first?.cellCount == 1)
    }

    /// A working directory's notebooks/ beside the checkout's: each notebook once, from the first
    /// folder that holds its name (the walkthrough's list showed all 11 twice).
    @Test func aNameIsListedOnceFromTheFirstFolderThatHoldsIt() throws {
        let mine = try KitFixtures.temporaryDirectory("notebooks")
        try "# Mine\n\n```loupe\nworkspace info\n```\n".write(
            toFile: mine + "/getting-started.md", atomically: true, encoding: .utf8)
        let listed = NotebooksBrowser(directories: [mine, Self.notebooks]).list()
        let names = listed.map { ($0.path as NSString).lastPathComponent }
        #expect(names.count == Set(names).count)
        #expect(listed.first { $0.path.hasSuffix("/getting-started.md") }?.path == mine + "/getting-started.md")
        #expect(names.contains("retrieval.md"))
    }

    @Test func aNotebookOpensWithItsCells() throws {
        let browser = NotebooksBrowser(directories: [Self.notebooks])
        let notebook = try browser.open(Self.notebooks + "/getting-started.md")
        #expect(notebook.cells.first?.commands.isEmpty == false)
    }

    @Test func openingAMissingNotebookNamesItsPath() throws {
        let path = Self.notebooks + "/no-such-notebook.md"
        let error = #expect(throws: NotebookReadError.self) { try NotebooksBrowser(directories: []).open(path) }
        #expect(error?.path == path)
        #expect(error?.description.hasPrefix(path) == true)
    }
}
