import LoupeStore

extension RooflineData {
    /// The latest machine profile's ceilings and MiniLM's latest kernel runs. Kernel rates are
    /// whole-machine rates (their time is summed over the threads that ran concurrently), to
    /// sit under the all-core roofs.
    static func load(from workspace: Workspace) -> RooflineData {
        let profile = try? workspace.latestMachineProfile()
        let runs = (try? workspace.latestKernelRuns(suite: "minilm-forward")) ?? []
        let ceilings = (profile?.ceilings ?? []).filter { !$0.name.contains("1 core") }.map {
            Ceiling(kind: $0.kind, name: $0.name, value: $0.value)
        }
        let points = runs.map { run in
            let seconds = Double(run.nanoseconds) / 1e9 / Double(max(1, run.threads))
            return Point(
                name: run.kernel, milliseconds: seconds * 1000, gflopsPerSecond: run.flops / max(1e-12, seconds) / 1e9,
                flopsPerByte: run.bytes > 0 ? run.flops / run.bytes : 0)
        }
        return RooflineData(machine: profile?.profile.machine, ceilings: ceilings, points: points)
    }
}
