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
        #expect(report1.window.leavesOutLastStep && report1.window.stepsLabel.hasPrefix("ProfilerSteps 1–1 of 2"))
    }

    /// Ranks come from each file's distributedInfo, not the order given.
    @Test func ranksComeFromTheFilesNotTheirOrder() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let directory = KitFixtures.path("\(Self.kineto)/distributed-2rank")
        let report = try service.importFiles([
            "\(directory)/sampled_rank-1.json.gz", "\(directory)/sampled_rank-0.json.gz",
        ])
        let loaded = try service.load(try #require(try workspace.profiles.profilerTrace(id: report.id)))
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

    /// When the database cannot grow (SQLite's own full-disk error, reached here by capping the
    /// file's pages) the import says the disk is full, stores nothing, and works once there is
    /// room.
    @Test func aFullDiskStoresNothingAndSaysSo() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let trace = KitFixtures.path("\(Self.kineto)/distributed-2rank")
        try workspace.write { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 40)")
        }
        #expect {
            _ = try ProfileService(workspace: workspace).importFiles([trace])
        } throws: { error in
            (error as? WorkspaceError)?.message.hasPrefix("cannot be written: the disk is full") == true
        }
        #expect(try workspace.profilerTraces().isEmpty)
        #expect(try workspace.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM profiler_events") } == 0)
        try workspace.write { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        #expect(try ProfileService(workspace: workspace).importFiles([trace]).events == 4_811 + 4_676)
    }

    /// A trace the disk surely cannot hold is refused before a byte is read: a sparse file eight
    /// times the free space, which takes no space itself.
    @Test func aTraceBiggerThanTheDiskIsRefusedUpFront() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let directory = try KitFixtures.temporaryDirectory("huge-profile")
        let huge = directory + "/huge.json"
        let free = try #require(Workspace.freeBytes(besides: workspace.path))
        #expect(FileManager.default.createFile(atPath: huge, contents: Data("[".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: huge))
        try handle.truncate(atOffset: UInt64(free) * 8)
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: huge) }
        #expect {
            _ = try ProfileService(workspace: workspace).importFiles([huge])
        } throws: { error in
            let text = (error as? ProfileReadError)?.description ?? ""
            return text.hasPrefix("\(huge): storing its events needs at least") && text.contains("nothing was stored")
        }
        #expect(try workspace.profilerTraces().isEmpty)
        // A gzip's size inflated comes from its trailer.
        let gzip = KitFixtures.path("\(Self.kineto)/distributed-2rank/sampled_rank-0.json.gz")
        let inflated = ProfileService.inflatedSize(gzip)
        #expect(inflated > 4 * ((try? TextFile.readableSize(gzip)) ?? 0))
    }

    /// A CPU trace's multiplies are timed by their operators: the three 32×64 · 64×128 addmms
    /// of the MLP's first layer took 126.629, 39.398 and 40.561 µs.
    @Test func gemmsOfACPUTraceAreTimedOnTheHost() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let id = try service.importFiles([KitFixtures.path("\(Self.kineto)/cpu-mlp-step.json.gz")]).id
        let gemms = try service.gemms(try #require(try workspace.profiles.profilerTrace(id: id)))
        #expect(gemms.device == "CPU" && gemms.deviceName == nil && gemms.unshaped == 0)
        #expect(gemms.rows.count == 8 && gemms.rows.allSatisfy { $0.count == 3 })
        let first = try #require(
            gemms.rows.first { $0.operatorName == "aten::addmm" && $0.shape.m == 32 && $0.shape.k == 64 })
        #expect(first.shape == GEMMShape(batch: 1, m: 32, n: 128, k: 64, precision: "FP32"))
        #expect(first.totalNs == 126_629 + 39_398 + 40_561)
        #expect(abs(first.gflopsPerSecond - 3 * 2 * 32 * 64 * 128 / 206_588) < 1e-9)
    }

    /// A GPU trace's multiplies are timed by the kernels each launched (its External id).
    @Test func gemmsOfAGPUTraceAreTimedByTheirKernels() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let service = ProfileService(workspace: workspace)
        let record = try #require(
            try workspace.profiles.profilerTrace(
                id: try service.importFiles([KitFixtures.path("\(Self.kineto)/amd-mi250")]).id))
        let gemms = try service.gemms(record)
        #expect(gemms.device == "GPU" && gemms.deviceName == "AMD Radeon Graphics")
        #expect(Set(gemms.rows.map(\.shape.label)) == ["5×128 · 128×128", "128×5 · 5×128"])
        let loaded = try service.load(record)
        let events = loaded.ranks.flatMap(\.events)
        for row in gemms.rows {
            let op = try #require(
                events.first { $0.kind == .cpuOp && loaded.names[$0.name] == row.operatorName && $0.externalID != 0 })
            let kernels = events.filter { $0.kind == .kernel && $0.externalID == op.externalID }
            #expect(!kernels.isEmpty && row.totalNs == kernels.reduce(0) { $0 + $1.duration })
        }
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
            try service.load(try #require(try workspace.profiles.profilerTrace(id: a.id))),
            try service.load(try #require(try workspace.profiles.profilerTrace(id: b.id))))
        let sgemm = try #require(comparison.rows.first { $0.name == "ampere_sgemm_32x32_sliced1x4_tn" })
        #expect(sgemm.presence == "removed" && sgemm.beforeCount == 6 && sgemm.beforeNs == 2_621_000)
        #expect(comparison.rows.contains { $0.presence == "new" && $0.name.hasPrefix("ncclKernel_SendRecv") })
        #expect(comparison.afterGPUNs == comparison.rows.reduce(0) { $0 + $1.afterNs })
    }
}
