import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// Machine profiles, ceilings, kernel runs and search sweeps, written once: every test runs on a
/// SQLite workspace and on a real PostgreSQL server.
@Suite struct RooflineTablesTests {
    typealias Backend = StoreBackend

    /// Profiles read back newest first with their ceilings; a ceiling added later joins its
    /// profile; the latest CPU profile and a GPU one are found by kind and name.
    @Test(arguments: Backend.allCases) func profilesAndTheirCeilingsReadBackAsStored(_ backend: Backend) throws {
        let tables = RooflineTables(try backend.database("profiles"))
        #expect(try tables.latestMachineProfile() == nil)
        let day = Date(timeIntervalSince1970: 1_790_000_000)
        let older = try tables.record(
            MachineProfileRecord(machine: "box", cores: 2, measuredAt: day, sweepJSON: "[]"),
            ceilings: [CeilingRecord(kind: "compute", name: "FP32 (2 cores)", value: 204.5, provenance: "fma loop")])
        let newer = try tables.record(
            MachineProfileRecord(machine: "box", cores: 2, measuredAt: day.addingTimeInterval(60), sweepJSON: "[1]"),
            ceilings: [
                CeilingRecord(kind: "compute", name: "FP32 (2 cores)", value: 210, provenance: "fma loop"),
                CeilingRecord(kind: "memory", name: "L1", value: 880.25, provenance: "triad plateau"),
            ])
        let gpu = try tables.record(
            MachineProfileRecord(machine: "H100 SXM", cores: 0, measuredAt: day, sweepJSON: "[]", kind: "gpu"),
            ceilings: [])
        try tables.add(
            [
                CeilingRecord(
                    kind: "compute", name: "INT8 (2 cores)", value: 812, provenance: "vpmaddubsw", precision: "INT8")
            ],
            toProfile: newer)

        #expect(try tables.machineProfiles().compactMap(\.id) == [newer, gpu, older])
        let latest = try #require(try tables.latestMachineProfile())
        #expect(latest.profile.id == newer && latest.profile.sweepJSON == "[1]")
        #expect(latest.profile.measuredAt == day.addingTimeInterval(60))
        #expect(latest.ceilings.map(\.name) == ["FP32 (2 cores)", "L1", "INT8 (2 cores)"])
        #expect(latest.ceilings.map(\.value) == [210, 880.25, 812])
        #expect(latest.ceilings.map(\.precision) == [nil, nil, "INT8"])
        #expect(latest.ceilings.allSatisfy { $0.profileID == newer })
        #expect(try tables.ceilings(profileID: older).map(\.value) == [204.5])
        #expect(try tables.machineProfile(named: "H100 SXM", kind: "gpu")?.id == gpu)
        #expect(try tables.machineProfile(named: "H100 SXM", kind: "cpu") == nil)
    }

    /// Kernel runs come back whole (their per-precision FLOPs and per-level bytes included), by
    /// id in the order asked, and the latest of each shape is what a roofline shows.
    @Test(arguments: Backend.allCases) func kernelRunsReadBackWholeAndTheLatestPerShape(_ backend: Backend) throws {
        let tables = RooflineTables(try backend.database("kernels"))
        let when = Date(timeIntervalSince1970: 1_790_000_000)
        func run(_ kernel: String, _ nanoseconds: Int64) -> KernelRun {
            KernelRun(
                suite: "kernels", kernel: kernel, workload: "1024x1024x1024", calls: 3, nanoseconds: nanoseconds,
                flops: 2.147e9, bytes: 1.2e7, threads: 2, machine: "box", measuredAt: when,
                flopsByPrecision: ["INT8": 2.147e9], scratchBytes: 4096, footprintBytes: 12_582_912,
                bytesByLevel: ["DRAM": 1.2e7, "L2": 3.4e7])
        }
        let first = try tables.record([run("matmul", 100), run("layernorm", 7)])
        let second = try tables.record([run("matmul", 90)])
        #expect(first.count == 2 && second.count == 1 && Set(first + second).count == 3)
        #expect(try tables.kernelRuns(ids: []).isEmpty)
        let asked = try tables.kernelRuns(ids: [second[0], 999_999, first[0]])
        #expect(asked.map(\.nanoseconds) == [90, 100])
        let whole = try #require(asked.first)
        #expect(
            whole
                == {
                    var expected = run("matmul", 90)
                    expected.id = second[0]
                    return expected
                }())
        let latest = try tables.latestKernelRunPerShape()
        #expect(latest.map(\.kernel).sorted() == ["layernorm", "matmul"])
        #expect(latest.first { $0.kernel == "matmul" }?.nanoseconds == 90)
    }

    /// A benchmark's sweeps are stored together; the latest per workload and engine comes back.
    @Test(arguments: Backend.allCases) func theLatestSweepOfEachEngineIsKept(_ backend: Backend) throws {
        let tables = RooflineTables(try backend.database("sweeps"))
        func sweep(_ engine: String, _ qps: Double) -> ANNSweepRecord {
            ANNSweepRecord(
                workload: "clustered 100k", engine: engine, buildSeconds: 80,
                points: [.init(ef: 14, recallAt10: 0.951, queriesPerSecond: qps)], machine: "box")
        }
        try tables.record([sweep("loupe", 12_800), sweep("hnswlib", 10_300)])
        try tables.record([sweep("loupe", 13_100)])
        let latest = try tables.latestANNSweeps()
        #expect(latest.map(\.engine) == ["hnswlib", "loupe"])
        #expect(latest.map { $0.points.first?.queriesPerSecond } == [10_300, 13_100])
    }
}
