extension AppState {
    /// Answers the port requests among `effects` on `ports` in the calling thread, as the runtime
    /// does in the background, folding each answer back until no request is left; other effects
    /// are dropped. For benches and tests that play the loop without a terminal.
    package mutating func settle(_ effects: [Effect], ports: Ports) {
        var pending = effects
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .port(let call): pending += update(.answered(call.answer(using: ports)))
            case .portJob(let id, let call): pending += update(.readFinished(id, call.answer(using: ports)))
            default: break
            }
        }
    }
}
