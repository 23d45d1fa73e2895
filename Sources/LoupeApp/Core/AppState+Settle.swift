extension AppState {
    /// Answers the port requests among `effects` on `ports` in the calling thread, as the runtime
    /// does in the background, folding each answer back until no request is left; other effects
    /// are dropped. For benches and tests that play the loop without a terminal.
    ///
    /// `answering` picks the requests answered; the others are left unanswered, as if still
    /// running in the background (a bench timing what shows before a slow job ends).
    package mutating func settle(
        _ effects: [Effect], ports: Ports, answering: (PortCall) -> Bool = { _ in true }
    ) {
        var pending = effects
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .port(let call):
                if answering(call) { pending += update(.answered(call.answer(using: ports))) }
            case .portJob(let id, let call):
                if answering(call) { pending += update(.readFinished(id, call.answer(using: ports))) }
            case .quit, .suspend, .redraw, .runCommand, .runCommandIn, .cancelJobs, .copy, .recordHistory, .editText,
                .writeFile:
                // What the runtime does outside the reducer: settling answers the ports alone.
                break
            }
        }
    }
}
