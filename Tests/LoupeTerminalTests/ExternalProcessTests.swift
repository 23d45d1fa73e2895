import Glibc
import LoupeTerminal
import Testing

/// The program an editor hand-over runs: its exit status, and ctrl+c in it not quitting Loupe.
@Suite(.serialized) struct ExternalProcessTests {
    @Test func theExitStatusAndASignalAreReportedAsAShellWould() {
        #expect(ExternalProcess.run(["/bin/sh", "-c", "exit 3"]) == 3)
        #expect(ExternalProcess.run(["/bin/sh", "-c", "kill -TERM $$"]) == 128 + SIGTERM)
        #expect(ExternalProcess.run(["/nonexistent/loupe-editor"]) == -1)
    }

    /// A SIGINT that reaches Loupe while the program runs (ctrl+c in the terminal they share) is
    /// ignored, as system(3) ignores it; Loupe's own handler is back afterwards.
    @Test func anInterruptWhileTheProgramRunsDoesNotReachLoupe() {
        TerminationSignals.install()
        _ = TerminationSignals.take()
        // The program sends SIGINT to its parent (this process), then exits normally.
        #expect(ExternalProcess.run(["/bin/sh", "-c", "kill -INT $PPID; exit 0"]) == 0)
        #expect(TerminationSignals.take() == nil)
        // The handler is restored: a SIGINT now is seen.
        kill(getpid(), SIGINT)
        for _ in 0..<100 where TerminationSignals.lastReceived == nil { usleep(1000) }
        #expect(TerminationSignals.take() == SIGINT)
    }
}
