import LoupeKit
import Testing

@Suite struct NotebookTests {
    static let sample = """
        # Title

        Prose with a fence of another language:

        ```sh
        loupe notebook run x.md
        ```

        ```loupe
        workspace info
        # a comment
        ! theme nope
        ```

        ```output
        old output
        ```

        Trailing prose.

        """

    @Test func parseAndRenderRoundTripExactly() {
        for text in [Self.sample, "", "no cells", "```loupe\nunclosed", "````markdown\n```loupe\nx\n```\n````\n"] {
            #expect(Notebook.parse(text).rendered() == text)
        }
    }

    @Test func cellsCarryCommandsAndTheirOutput() throws {
        let notebook = Notebook.parse(Self.sample)
        let cell = try #require(notebook.cells.first)
        #expect(notebook.cells.count == 1)
        #expect(cell.commands == ["workspace info", "! theme nope"])
        #expect(cell.output == ["old output"])
    }

    @Test func fencesInsideOtherCodeBlocksAreNotCells() {
        #expect(Notebook.parse("````markdown\n```loupe\nx\n```\n````\n").cells.isEmpty)
    }

    @Test func runWritesOutputsAndIsIdempotent() {
        let runner = NotebookRunner { line in
            line.hasPrefix("theme")
                ? CommandOutcome(error: "no theme named 'nope'") : CommandOutcome(output: "ran \(line)\n")
        }
        let first = runner.run(Notebook.parse("intro\n\n```loupe\nworkspace info\n```\n\nend\n"))
        #expect(first.failures.isEmpty)
        #expect(
            first.notebook.rendered()
                == "intro\n\n```loupe\nworkspace info\n```\n\n```output\nran workspace info\n```\n\nend\n")
        let second = runner.run(Notebook.parse(first.notebook.rendered()))
        #expect(second.notebook.rendered() == first.notebook.rendered())

        let expected = runner.run(Notebook.parse(Self.sample))
        #expect(expected.failures.isEmpty)
        #expect(
            expected.notebook.cells[0].output == [
                "› workspace info", "ran workspace info", "› ! theme nope", "error: no theme named 'nope'",
            ])
    }

    @Test func unexpectedFailuresAndUnexpectedSuccessesAreReported() {
        let failing = NotebookRunner { _ in CommandOutcome(error: "boom") }
        let result = failing.run(Notebook.parse("```loupe\nworkspace info\n```\n"))
        #expect(result.failures.map(\.message) == ["boom"])
        let succeeding = NotebookRunner { _ in CommandOutcome(output: "fine") }
        let surprise = succeeding.run(Notebook.parse("```loupe\n! theme nope\n```\n"))
        #expect(surprise.failures.first?.message.contains("expected an error") == true)
    }

    @Test func outputWithBackticksGetsALongerFence() {
        let runner = NotebookRunner { _ in CommandOutcome(output: "```\ncode\n```") }
        let text = runner.run(Notebook.parse("```loupe\nx\n```\n")).notebook.rendered()
        #expect(text.contains("````output\n```\ncode\n```\n````"))
        #expect(Notebook.parse(text).rendered() == text)
    }
}
