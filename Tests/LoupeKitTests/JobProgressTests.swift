import LoupeKit
import Testing

@Suite struct JobProgressTests {
    @Test func fractionAndETA() {
        let progress = JobProgress(completed: 25, total: 100)
        #expect(progress.fraction == 0.25)
        #expect(progress.estimatedSecondsRemaining(elapsed: 10) == 30)
        #expect(JobProgress(completed: 3, total: nil).fraction == nil)
        #expect(JobProgress(completed: 0, total: 10).estimatedSecondsRemaining(elapsed: 5) == nil)
    }

    @Test func cancellationIsSeenByTheWork() {
        let reporter = JobReporter.detached()
        #expect(throws: Never.self) { try reporter.checkCancellation() }
        reporter.cancel()
        #expect(throws: JobCancelled.self) { try reporter.checkCancellation() }
    }
}
