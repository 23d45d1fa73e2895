import Foundation
import GRDB
import LoupeBase
import LoupeProfiling
import Testing

/// The Nsight Systems reader on real exports (Fixtures/nsys, see PROVENANCE.md) against
/// figures `expected.py` computes from the same files with plain SQL.
@Suite struct NsysReaderTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/nsys")
    static let fixtureNames = [
        "fuser-64ee035-report1.sqlite", "fuser-ee4fcf3-report1.sqlite", "mordred-03527a5-report1.sqlite",
        "pipit-saxpy-mpi-cuda.sqlite",
    ]

    /// One fixture's figures in expected.json.
    struct Expected: Decodable {
        struct Total: Decodable {
            var count: Int
            var totalNs: Int64
        }
        struct Kernel: Decodable {
            var name: String
            var count: Int
            var totalNs: Int64
        }
        var kernel: Total
        var memcpy: Total
        var memset: Total
        var sync: Total
        var topKernels: [Kernel]
        var runtime: Int
        var backtraceRows: Int
        var nvtxRanges: Int
        var nvtxOther: Int
        var pairs: [String: Int]
        var naivePairs: [String: Int]
        var launchPairs: Int
        var busyNs: Int64
        var spanNs: Int64
        var events: Int
        var start: Int64
        var end: Int64
        var gpus: [String]
        var copyNames: [String: Int]
        var memsetNames: [String: Int]
        var syncNames: [String: Int]
    }

    static let expected: [String: Expected] = {
        let data = try! Data(contentsOf: fixtures.appendingPathComponent("expected.json"))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try! decoder.decode([String: Expected].self, from: data)
    }()

    struct Read {
        var info: KinetoFileInfo
        var events: [ProfileEvent]
        var names: ProfileNames
        var batches: [Int]

        func named(_ name: String) -> [ProfileEvent] { events.filter { names[$0.name] == name } }

        func of(_ kind: ProfileEventKind) -> [ProfileEvent] { events.filter { $0.kind == kind } }

        /// How many events of each name `kind` has.
        func nameCounts(_ kind: ProfileEventKind) -> [String: Int] {
            of(kind).reduce(into: [:]) { $0[names[$1.name], default: 0] += 1 }
        }

        /// The args of `event` as JSON.
        func args(_ event: ProfileEvent) throws -> JSONValue { try JSONValue.parse(try #require(event.args)) }
    }

    private static func read(_ path: String) throws -> Read {
        var names = ProfileNames()
        var events: [ProfileEvent] = []
        var batches: [Int] = []
        let info = try NsysReader.read(path, names: &names) { batch in
            batches.append(batch.count)
            events += batch
        }
        return Read(info: info, events: events, names: names, batches: batches)
    }

    private static func read(fixture: String) throws -> Read {
        try read(fixtures.appendingPathComponent(fixture).path)
    }

    /// A copy of `fixture` in a temporary directory, changed by `change`, and its path.
    private static func changedCopy(of fixture: String, _ change: (Database) throws -> Void) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nsys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(fixture)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(fixture), to: url)
        let database = try DatabaseQueue(path: url.path)
        try database.write(change)
        try database.close()
        return url
    }

    private static func failure(_ path: String) -> ProfileReadError? {
        do {
            _ = try read(path)
            Issue.record("\(path) read without an error")
            return nil
        } catch let error as ProfileReadError {
            return error
        } catch {
            Issue.record("not a ProfileReadError: \(error)")
            return nil
        }
    }

    // MARK: Every fixture

    /// Each kind's count and total time, the longest kernels, the names of copies, memsets and
    /// syncs, and the events' first start and last end are what plain SQL says they are.
    @Test(arguments: fixtureNames) func eventsMatchTheExport(fixture: String) throws {
        let expected = try #require(Self.expected[fixture])
        let got = try Self.read(fixture: fixture)
        func total(_ kind: ProfileEventKind) -> Expected.Total {
            let events = got.of(kind)
            return Expected.Total(count: events.count, totalNs: events.reduce(0) { $0 + $1.duration })
        }
        #expect(total(.kernel).count == expected.kernel.count)
        #expect(total(.kernel).totalNs == expected.kernel.totalNs)
        #expect(total(.memcpy).count == expected.memcpy.count)
        #expect(total(.memcpy).totalNs == expected.memcpy.totalNs)
        #expect(total(.memset).count == expected.memset.count)
        #expect(total(.memset).totalNs == expected.memset.totalNs)
        #expect(total(.sync).count == expected.sync.count)
        #expect(total(.sync).totalNs == expected.sync.totalNs)
        #expect(got.of(.runtime).count == expected.runtime)
        #expect(got.of(.annotation).count == expected.nvtxRanges)
        #expect(got.events.count == expected.events)
        #expect(got.info.events == expected.events)
        #expect(got.info.start == expected.start)
        #expect(got.info.end == expected.end)
        #expect(
            got.info.passedOver["CUDA backtrace row"] == (expected.backtraceRows > 0 ? expected.backtraceRows : nil))
        let nvtxPassedOver = got.info.passedOver.filter { $0.key.hasPrefix("NVTX") }.values.reduce(0, +)
        #expect(nvtxPassedOver == expected.nvtxOther)
        #expect(got.nameCounts(.memcpy) == expected.copyNames)
        #expect(got.nameCounts(.memset) == expected.memsetNames)
        #expect(got.nameCounts(.sync) == expected.syncNames)

        let kernels = ProfileAnalysis.kernels(got.of(.kernel), names: got.names).prefix(5)
        #expect(kernels.map(\.name) == expected.topKernels.map(\.name))
        #expect(kernels.map(\.durations.count) == expected.topKernels.map(\.count))
        #expect(kernels.map(\.durations.total) == expected.topKernels.map(\.totalNs))

        let devices = try JSONValue.parse(try #require(got.info.deviceProperties))
        #expect(devices.array?.compactMap { $0["name"]?.string } == expected.gpus)
    }

    /// Runtime calls and the GPU work they started share a correlation only within a process:
    /// per kind, as many pairs as the SQL join on (correlationId, pid); and the launch analysis
    /// pairs the launch calls among them.
    @Test(arguments: fixtureNames) func launchesPairWithTheirGPUWork(fixture: String) throws {
        let expected = try #require(Self.expected[fixture])
        let got = try Self.read(fixture: fixture)
        var calls: [Int64: Int] = [:]
        for call in got.of(.runtime) where call.correlation != 0 { calls[call.correlation, default: 0] += 1 }
        for (kind, label) in [
            (ProfileEventKind.kernel, "kernel"), (.memcpy, "memcpy"), (.memset, "memset"), (.sync, "sync"),
        ] {
            let pairs = got.of(kind).reduce(0) { $0 + (calls[$1.correlation] ?? 0) }
            #expect(pairs == expected.pairs[label], "\(label)")
        }
        let launches = ProfileAnalysis.launches(RankEvents(rank: 0, events: got.events), names: got.names)
        #expect(launches.pairs == expected.launchPairs)
    }

    /// GPU busy time is the union of the copies', memsets', syncs' and kernels' intervals over
    /// the span from the first to the last.
    @Test(arguments: fixtureNames) func temporalBreakdownMatchesTheUnionOfGPUWork(fixture: String) throws {
        let expected = try #require(Self.expected[fixture])
        let got = try Self.read(fixture: fixture)
        let temporal = ProfileAnalysis.temporal(RankEvents(rank: 0, events: got.events), names: got.names)
        #expect(temporal.span == expected.spanNs)
        #expect(temporal.idle == expected.spanNs - expected.busyNs)
        #expect(temporal.compute + temporal.nonCompute == expected.busyNs)
    }

    /// Events are numbered 0, 1, 2… in the order they arrive, and a second read gives the same.
    @Test(arguments: fixtureNames) func readsAreNumberedAndDeterministic(fixture: String) throws {
        let first = try Self.read(fixture: fixture)
        let second = try Self.read(fixture: fixture)
        #expect(first.events.map(\.index) == Array(0..<first.events.count))
        #expect(first.events == second.events)
        #expect(first.info == second.info)
        #expect(first.batches.allSatisfy { $0 > 0 && $0 <= 1 << 16 })
    }

    // MARK: What each export shows

    /// nvFuser's export (nsys 2024.6, H200): kernels carry Kineto's args, runtime calls lose
    /// CUPTI's version suffix and keep their correlation with the kernel they launched, and
    /// processes, threads, GPUs and streams are named.
    @Test func aKernelIsNamedLaidOutAndLinkedAsKinetoDoes() throws {
        let got = try Self.read(fixture: "fuser-64ee035-report1.sqlite")
        let kernel = try #require(got.of(.kernel).first)
        #expect(got.names[kernel.name].hasPrefix("void at::native::<unnamed>::distribution_elementwise_grid_stride"))
        #expect(got.names[kernel.category] == "kernel")
        #expect(kernel.start == 770_742_793 && kernel.duration == 40_641)
        #expect(kernel.pid == 0 && kernel.tid == 7)
        let process: Int64 = 30156
        #expect(kernel.correlation == process << 32 | 158)
        let args = try got.args(kernel)
        #expect(args["grid"] == .array([.number(1056), .number(1), .number(1)]))
        #expect(args["block"] == .array([.number(256), .number(1), .number(1)]))
        #expect(args["registers per thread"] == .number(40))
        #expect(args["shared memory"] == .number(0))
        #expect(args["stream"] == .number(7) && args["device"] == .number(0) && args["correlation"] == .number(158))

        let launch = try #require(got.of(.runtime).first { $0.correlation == kernel.correlation })
        #expect(got.names[launch.name] == "cudaLaunchKernel")
        #expect(got.names[launch.category] == "cuda_runtime")
        #expect(launch.pid == process && launch.start < kernel.start)
        let callNames = Set(got.of(.runtime).map { got.names[$0.name] })
        #expect(callNames.isSuperset(of: ["cuLaunchKernel", "cuLaunchKernelEx", "cudaGetDeviceProperties_v2"]))
        #expect(!callNames.contains { $0.hasSuffix("_v7000") || $0.hasSuffix("_v3020") })
        let driverCall = try #require(got.named("cuLaunchKernelEx").first)
        #expect(got.names[driverCall.category] == "cuda_driver")

        let range = try #require(got.named("ExpressionEvaluator::evaluate").first)
        #expect(range.kind == .annotation && range.pid == process)
        #expect(got.info.processNames[process] == "./bin/test_matmul")
        #expect(got.info.processNames[0] == "GPU 0")
        #expect(got.info.threadNames["0/7"] == "stream 7")
        #expect(got.info.threadNames["\(process)/\(range.tid)"] != nil)
        #expect(got.info.baseTimeNanoseconds == 1_733_877_925_987_393_218)
        let properties = try JSONValue.parse(try #require(got.info.deviceProperties))
        let device = try #require(properties.array?.first)
        #expect(device["numSms"] == .number(132))
        #expect(device["computeMajor"] == .number(9))
        #expect(device["totalGlobalMem"] == .number(150_137_864_192))
    }

    /// The 2022 export from pipit (no ENUM tables, NVTX names as registered strings, CUDA
    /// backtrace rows repeating calls) reads with CUPTI's fixed copy kinds, each call once, and
    /// its NVTX domain in the ranges' args.
    @Test func anOlderExportWithBacktracesAndRegisteredNVTXNames() throws {
        let got = try Self.read(fixture: "pipit-saxpy-mpi-cuda.sqlite")
        let mpiInit = try #require(got.named("MPI_Init").first)
        #expect(mpiInit.kind == .annotation)
        #expect(try got.args(mpiInit)["domain"] == .string("MPI"))
        #expect(got.info.passedOver["NVTX thread name"] == 1)
        #expect(got.info.passedOver["NVTX domain"] == 1)
        // One launch call per kernel, though the backtrace rows repeat each under its id.
        for kernel in got.of(.kernel) {
            #expect(got.of(.runtime).filter { $0.correlation == kernel.correlation }.count == 1)
        }
    }

    /// The 2021 export (no metadata table, no mangledName, no session start) still reads, its
    /// OS runtime calls counted as passed over.
    @Test func anExportWithoutMetadataReads() throws {
        let got = try Self.read(fixture: "mordred-03527a5-report1.sqlite")
        #expect(got.info.baseTimeNanoseconds == nil)
        #expect(got.info.passedOver["OSRT_API row"] == 4631)
        #expect(got.of(.kernel).filter { got.names[$0.name].hasPrefix("void build_GPU2<128, 4>(int*") }.count == 9)
        // Event syncs carry no stream: -1, as Kineto writes it.
        #expect(got.named("Event Sync").allSatisfy { $0.tid == -1 })
    }

    /// nsys numbers correlations per process: in nvFuser's two-process export both processes
    /// have a call with correlation id 1, which stay apart.
    @Test func correlationIDsOfTwoProcessesStayApart() throws {
        let got = try Self.read(fixture: "fuser-ee4fcf3-report1.sqlite")
        let ones = got.of(.runtime).filter { (try? got.args($0)["correlation"]) == .number(1) }
        #expect(Set(ones.map(\.pid)) == [50556, 50922])
        #expect(Set(ones.map(\.correlation)).count == 2)
    }

    /// A launch in one process never pairs with the kernel of another that reuses its
    /// correlation id: made so by giving the second process's call a kernel's id and name.
    @Test func launchesPairWithinTheirProcessOnly() throws {
        let fixture = "fuser-ee4fcf3-report1.sqlite"
        let url = try Self.changedCopy(of: fixture) { db in
            try db.execute(
                sql: """
                    UPDATE CUPTI_ACTIVITY_KIND_RUNTIME
                    SET correlationId = (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1),
                        nameId = (SELECT id FROM StringIds WHERE value = 'cudaLaunchKernel_v7000')
                    WHERE ((globalTid >> 24) & 16777215) = 50922 AND correlationId = 127
                    """)
            #expect(db.changesCount == 1)
        }
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let expected = try #require(Self.expected[fixture])
        let got = try Self.read(url.path)
        let launches = ProfileAnalysis.launches(RankEvents(rank: 0, events: got.events), names: got.names)
        #expect(launches.pairs == expected.launchPairs)
        #expect(got.named("cudaLaunchKernel").contains { $0.pid == 50922 })
    }

    /// The format is told by the file's first bytes, so ProfileFile reads an export as the
    /// reader does.
    @Test func profileFileReadsAnExport() throws {
        let path = Self.fixtures.appendingPathComponent("mordred-03527a5-report1.sqlite").path
        #expect(try ProfileFormat.of(path) == .nsightSystems)
        var names = ProfileNames()
        var events: [ProfileEvent] = []
        let info = try ProfileFile.read(path, names: &names) { events += $0 }
        let direct = try Self.read(path)
        #expect(events == direct.events)
        #expect(info == direct.info)
    }

    // MARK: Bad input

    /// A SQLite file that is no export says so; nothing else about it is read.
    @Test func aSQLiteFileThatIsNoExportIsAnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nsys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.sqlite").path
        let database = try DatabaseQueue(path: path)
        try database.write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)") }
        try database.close()
        let error = try #require(Self.failure(path))
        #expect(error.description.hasPrefix(path))
        #expect(error.message.contains("no Nsight Systems export"))
    }

    /// An export without its StringIds table cannot name anything, and says which table it lacks.
    @Test func anExportWithoutStringIdsIsAnError() throws {
        let url = try Self.changedCopy(of: "mordred-03527a5-report1.sqlite") {
            try $0.execute(sql: "DROP TABLE StringIds")
        }
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let error = try #require(Self.failure(url.path))
        #expect(error.description.hasPrefix(url.path))
        #expect(error.message.contains("no StringIds table"))
    }

    /// A row naming a string StringIds lacks, or ending before it starts, is named by table and row.
    @Test func aBadRowIsNamedByTableAndRow() throws {
        let fixture = "mordred-03527a5-report1.sqlite"
        let missing = try Self.changedCopy(of: fixture) { db in
            try db.execute(sql: "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 999999 WHERE rowid = 3")
        }
        defer { try? FileManager.default.removeItem(at: missing.deletingLastPathComponent()) }
        let noName = try #require(Self.failure(missing.path))
        #expect(noName.description.hasPrefix(missing.path))
        #expect(noName.message == "CUPTI_ACTIVITY_KIND_KERNEL row 3: its demangledName 999999 is not in StringIds")

        let backwards = try Self.changedCopy(of: fixture) { db in
            try db.execute(sql: "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 5 WHERE rowid = 7")
        }
        defer { try? FileManager.default.removeItem(at: backwards.deletingLastPathComponent()) }
        let error = try #require(Self.failure(backwards.path))
        #expect(error.message.hasPrefix("CUPTI_ACTIVITY_KIND_MEMCPY row 7: it ends"))
    }

    /// A file cut short (a copy interrupted) is an error naming it, not a crash or a short read.
    @Test(arguments: [4096, 100_000, 300_000]) func aTruncatedExportIsAnError(bytes: Int) throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("fuser-64ee035-report1.sqlite"))
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        try data.prefix(bytes).write(to: url)
        let error = try #require(Self.failure(url.path))
        #expect(error.description.hasPrefix(url.path))
        #expect(error.message.contains("cut short"))
    }
}
