import LoupeKit
import Synchronization
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

    /// A ```` ```sh run ```` block is one script, run whole (comments and blank lines are the
    /// script's); a plain ```` ```sh ```` block stays prose.
    @Test func aShellCellIsOneScriptRunWhole() throws {
        let text = "```sh\nnot run\n```\n\n```sh run\n# start it\necho a\n\necho b\n```\n\n```loupe\nx\n```\n"
        let notebook = Notebook.parse(text)
        #expect(notebook.rendered() == text)
        #expect(notebook.cells.map(\.isShell) == [true, false])
        let scripts = Mutex<[String]>([])
        let runner = NotebookRunner(
            execute: { line in CommandOutcome(output: "ran \(line)") },
            shell: { script in
                scripts.withLock { $0.append(script) }
                return CommandOutcome(output: "a\nb\n")
            })
        let result = runner.run(notebook)
        #expect(result.failures.isEmpty)
        #expect(scripts.withLock { $0 } == ["# start it\necho a\n\necho b"])
        #expect(result.notebook.cells.map(\.output) == [["a", "b"], ["ran x"]])
        #expect(Notebook.parse(result.notebook.rendered()).cells[0].isShell)

        // A script that fails keeps its output and is a failure at its fence's line; where
        // scripts are not run, the cell says so and fails too.
        let failing = NotebookRunner(
            execute: { _ in CommandOutcome() },
            shell: { _ in CommandOutcome(output: "half", error: "the script exited with status 1") })
        let failed = failing.run(notebook)
        #expect(failed.failures.map(\.line) == [5])
        #expect(failed.notebook.cells[0].output == ["half", "error: the script exited with status 1"])
        let unrun = NotebookRunner { _ in CommandOutcome() }.run(notebook)
        #expect(unrun.failures.first?.message.contains("run with `loupe notebook run`") == true)
    }

    @Test func outputWithBackticksGetsALongerFence() {
        let runner = NotebookRunner { _ in CommandOutcome(output: "```\ncode\n```") }
        let text = runner.run(Notebook.parse("```loupe\nx\n```\n")).notebook.rendered()
        #expect(text.contains("````output\n```\ncode\n```\n````"))
        #expect(Notebook.parse(text).rendered() == text)
    }
}
