import Foundation
import GRDB
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// Profiles (Kineto traces) imported into a real workspace and read back for the analyses.
@Suite struct ProfileServiceTests {
    static let kineto = "Tests/LoupeProfilingTests/Fixtures/kineto"

    /// A directory of rank files is one profile; each file's events keep its rank; the stored
    /// events give the same analyses as the files read directly; a second import changes nothing.
    @Test func aRankDirectoryImportsOnceAndReadsBackTheSame() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let directory = KitFixtures.path("\(Self.kineto)/distributed-2rank")
        let report = try service.importFiles([directory])
        #expect(!report.unchanged)
        #expect(report.ranks == 2)
        #expect(report.events == 4_811 + 4_676)
        #expect(report.files.map(\.rank) == [0, 1])
        let again = try service.importFiles([directory])
        #expect(again.unchanged && again.id == report.id)
        #expect(try workspace.profilerTraces().count == 1)

        let loaded = try service.load(try service.resolve("distributed"))
        #expect(loaded.ranks.map(\.rank) == [0, 1])
        var names = ProfileNames()
        var direct: [ProfileEvent] = []
        _ = try KinetoReader.read("\(directory)/sampled_rank-1.json.gz", names: &names) { direct += $0 }
        let stored = try #require(loaded.ranks.first { $0.rank == 1 })
        #expect(
            ProfileAnalysis.temporal(stored, names: loaded.names)
                == ProfileAnalysis.temporal(RankEvents(rank: 1, events: direct), names: names))
        let report1 = ProfileReport.make(loaded)
        #expect(report1.ranks[0].temporal.map(\.nanoseconds) == [106_252_000, 172_428_000, 321_378_000])
        #expect(report1.window.contains("the last is left out"))
    }

    /// Ranks come from each file's distributedInfo, not the order given.
    @Test func ranksComeFromTheFilesNotTheirOrder() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let directory = KitFixtures.path("\(Self.kineto)/distributed-2rank")
        let report = try service.importFiles([
            "\(directory)/sampled_rank-1.json.gz", "\(directory)/sampled_rank-0.json.gz",
        ])
        let loaded = try service.load(try #require(try workspace.profilerTrace(id: report.id)))
        #expect(loaded.ranks.first { $0.rank == 0 }?.events.count == 4_811)
        #expect(loaded.ranks.first { $0.rank == 1 }?.events.count == 4_676)
    }

    /// A bad file among good ones stores nothing and says which file and event.
    @Test func aBadFileStoresNothing() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let directory = try KitFixtures.temporaryDirectory("bad-profile")
        let bad = directory + "/rank-1.json"
        try
            #"{"distributedInfo": {"rank": 1}, "traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2}, {"ph": "X", "name": "k2", "ts": 3}]}"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let good = KitFixtures.path("\(Self.kineto)/distributed-2rank/sampled_rank-0.json.gz")
        #expect {
            _ = try ProfileService(workspace: workspace).importFiles([good, bad])
        } throws: { error in
            (error as? ProfileReadError)?.description == "\(bad): traceEvents[1] (byte 94): the X event has no dur"
        }
        #expect(try workspace.profilerTraces().isEmpty)
        #expect(try workspace.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM profiler_events") } == 0)
    }

    /// Two files of one rank are refused.
    @Test func twoFilesOfOneRankAreRefused() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let directory = try KitFixtures.temporaryDirectory("same-rank")
        let source = KitFixtures.path("\(Self.kineto)/distributed-2rank/sampled_rank-0.json.gz")
        try FileManager.default.copyItem(atPath: source, toPath: directory + "/a.json.gz")
        try FileManager.default.copyItem(atPath: source, toPath: directory + "/b.json.gz")
        #expect {
            _ = try ProfileService(workspace: workspace).importFiles([directory])
        } throws: { error in
            "\(error)".contains("it is rank 0, and so is")
        }
        #expect(try workspace.profilerTraces().isEmpty)
    }

    /// Two profiles compared: kernels only in one are new or removed, deltas are after − before.
    @Test func comparingTwoProfiles() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let a = try service.importFiles([KitFixtures.path("\(Self.kineto)/alexnet-a100")])
        let b = try service.importFiles([KitFixtures.path("\(Self.kineto)/distributed-2rank")])
        let comparison = ProfileComparison.make(
            try service.load(try #require(try workspace.profilerTrace(id: a.id))),
            try service.load(try #require(try workspace.profilerTrace(id: b.id))))
        let sgemm = try #require(comparison.rows.first { $0.name == "ampere_sgemm_32x32_sliced1x4_tn" })
        #expect(sgemm.presence == "removed" && sgemm.beforeCount == 6 && sgemm.beforeNs == 2_621_000)
        #expect(comparison.rows.contains { $0.presence == "new" && $0.name.hasPrefix("ncclKernel_SendRecv") })
        #expect(comparison.afterGPUNs == comparison.rows.reduce(0) { $0 + $1.afterNs })
    }
}
