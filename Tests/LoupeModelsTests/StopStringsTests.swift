import Testing

@testable import LoupeModels

@Suite struct StopStringsTests {
    /// Feeds `pieces` one at a time; returns what was released at each step, the stop, the rest.
    private func run(_ stops: [String], _ pieces: [String]) -> (steps: [String], stop: String?, tail: String) {
        var matcher = StopStrings(stops)
        var steps: [String] = []
        for piece in pieces {
            let (released, stop) = matcher.feed(piece)
            steps.append(released)
            if let stop { return (steps, stop, "") }
        }
        return (steps, nil, matcher.finish())
    }

    @Test func aStopSplitOverTokensIsNeverShownInPart() {
        let result = run(["\nUser:"], ["Paris", ".", "\n", "Us", "er", ":", " more"])
        #expect(result.steps == ["Paris", ".", "", "", "", ""])
        #expect(result.stop == "\nUser:")
    }

    @Test func aPrefixThatDoesNotCompleteIsReleasedOnceItCannot() {
        let result = run(["END"], ["the E", "ND", "x"])
        #expect(result.steps == ["the ", ""])
        #expect(result.stop == "END")
        let other = run(["END"], ["the E", "nd"])
        #expect(other.steps == ["the ", "End"])
        #expect(other.stop == nil)
    }

    @Test func textBeforeTheStopInTheSamePieceIsKept() {
        let result = run(["###"], ["answer: 4### more"])
        #expect(result.steps == ["answer: 4"])
        #expect(result.stop == "###")
    }

    @Test func theEarliestStopWinsAndHeldTextComesOutAtTheEnd() {
        // "abcd" starts before "bc" does.
        let result = run(["bc", "abcd"], ["xab", "cd"])
        #expect(result.stop == "abcd")
        #expect(result.steps.joined() == "x")
        let later = run(["bc", "abcd"], ["xabc"])
        #expect(later.stop == "bc")
        #expect(later.steps.joined() == "xa")
        let tail = run(["abc"], ["x", "ab"])
        #expect(tail.steps == ["x", ""])
        #expect(tail.tail == "ab")
    }

    @Test func noStopsReleasesEverythingAtOnce() {
        let result = run([], ["a", "b"])
        #expect(result.steps == ["a", "b"])
        #expect(result.tail == "")
    }
}
