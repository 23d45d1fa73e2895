import LoupeTUI
import LoupeTerminal
import Testing

@Suite struct HeadlessBackendTests {
    @Test func deliversTheScriptAndRecordsFrames() {
        let backend = HeadlessBackend(
            size: Size(width: 10, height: 2), script: [.key(.character("a")), .resize(Size(width: 20, height: 5))])
        #expect(backend.nextEvent(timeoutMilliseconds: 0) == .key(.character("a")))
        #expect(backend.nextEvent(timeoutMilliseconds: 0) == .resize(Size(width: 20, height: 5)))
        #expect(backend.size == Size(width: 20, height: 5))
        #expect(backend.nextEvent(timeoutMilliseconds: 0) == nil)
        backend.present(Frame(size: backend.size))
        #expect(backend.frames.count == 1)
    }
}
