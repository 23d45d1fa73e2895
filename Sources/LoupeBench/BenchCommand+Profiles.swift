import ArgumentParser
import Foundation
import Glibc
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeProfiling
import LoupeStore

extension BenchCommand {
    struct Profiles: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "profiles",
            abstract:
                "Profiler-trace import throughput and peak RSS, beside HTA's load time, and the timeline's first frame.",
            discussion: """
                A Kineto trace of the given size is generated (training steps as torch.profiler writes \
                them: ProfilerStep annotations, operators, cudaLaunchKernel calls with correlation ids and \
                flow events, GPU kernels with their launch arguments on a compute stream, NCCL kernels on \
                another, copies; nanosecond timestamps; one event per few lines as Kineto indents them). \
                `loupe profile import` reads it in a child process (its time and peak RSS are that \
                process's). With --hta PYTHON (default .venv-hta/bin/python when it exists) Holistic \
                Trace Analysis loads the same file in the same run (TraceAnalysis on its directory), its \
                time and peak RSS reported by itself. Then the Profiles panel opens the profile and shows \
                its timeline, timed to the first frame.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Size of the generated trace, in MB.") var megabytes = 200
        @Option(help: "The Python with HolisticTraceAnalysis installed (none: skip HTA).") var hta: String?
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Keep the generated file and workspace in this directory.") var keep: String?

        struct Result: Encodable {
            var fileBytes: Int
            var events: Int
            var importSeconds: Double
            var importMegabytesPerSecond: Double
            var importPeakRSSMegabytes: Double
            var storedMegabytes: Double
            var importPeakRSSOverStored: Double
            var htaSeconds: Double?
            var htaMegabytesPerSecond: Double?
            var htaPeakRSSMegabytes: Double?
            var speedupOverHTA: Double?
            var timelineFirstFrameMilliseconds: Double
            /// Zoomed in until the window's events are read: that frame, and how many it read.
            var timelineZoomedFrameMilliseconds: Double?
            var timelineZoomedEvents: Int
            /// The breakdown's report worked out from every event (the first open; kept after).
            var reportSeconds: Double
            var reportAgainMilliseconds: Double
        }

        func run(in context: CommandContext) throws {
            let directory =
                keep
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-profiles-\(UUID())").path
            let traceDirectory = directory + "/trace"
            try FileManager.default.createDirectory(atPath: traceDirectory, withIntermediateDirectories: true)
            defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }

            let file = traceDirectory + "/rank-0.pt.trace.json"
            let (bytes, events) = try Self.writeTrace(to: file, megabytes: megabytes)
            let workspacePath = directory + "/profiles.sqlite"
            let (seconds, rss) = try Traces.importInChildProcess(
                file, workspace: workspacePath, command: ["profile", "import"])
            let workspace = try Workspace(path: workspacePath)
            let stored = try workspace.profilerTraces()
            guard let profile = stored.first, let id = profile.id else {
                throw CommandFailure("bench profiles: the import stored no profile")
            }
            try workspace.checkpoint()
            let storedBytes = Self.fileBytes(workspacePath)

            let python =
                hta
                ?? (FileManager.default.isExecutableFile(atPath: ".venv-hta/bin/python") ? ".venv-hta/bin/python" : nil)
            let peer = python.flatMap { Self.htaLoad(traceDirectory, python: $0) }

            let timeline = try RenderBench.profileTimeline(
                profile: id, browser: ProfilesBrowser(workspace: workspace))
            var clock = Stopwatch()
            _ = try ProfilesBrowser(workspace: workspace).report(id)
            let reportSeconds = clock.lap()
            _ = try ProfilesBrowser(workspace: workspace).report(id)
            let reportAgain = clock.lap() * 1000

            let megabytesRead = Double(bytes) / 1e6
            let result = Result(
                fileBytes: bytes, events: profile.events, importSeconds: seconds,
                importMegabytesPerSecond: megabytesRead / seconds, importPeakRSSMegabytes: rss / 1e6,
                storedMegabytes: Double(storedBytes) / 1e6, importPeakRSSOverStored: rss / Double(max(1, storedBytes)),
                htaSeconds: peer?.seconds, htaMegabytesPerSecond: peer.map { megabytesRead / $0.seconds },
                htaPeakRSSMegabytes: peer.map { $0.rss / 1e6 }, speedupOverHTA: peer.map { $0.seconds / seconds },
                timelineFirstFrameMilliseconds: timeline.firstFrame,
                timelineZoomedFrameMilliseconds: timeline.zoomedFrame, timelineZoomedEvents: timeline.zoomedEvents,
                reportSeconds: reportSeconds,
                reportAgainMilliseconds: reportAgain)
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                String(
                    format: "generated Kineto trace: %.0f MB, %d events written (%d stored)", megabytesRead, events,
                    profile.events))
            context.print(
                String(
                    format:
                        "loupe profile import: %.2f s = %.1f MB/s, peak RSS %.0f MB (%.2f× the %.0f MB stored, %.2f× the file)",
                    seconds, result.importMegabytesPerSecond, rss / 1e6, result.importPeakRSSOverStored,
                    result.storedMegabytes, rss / Double(bytes)))
            if let peer {
                context.print(
                    String(
                        format: "HTA TraceAnalysis load: %.2f s = %.1f MB/s, peak RSS %.0f MB — Loupe %.2f× faster",
                        peer.seconds, megabytesRead / peer.seconds, peer.rss / 1e6, peer.seconds / seconds))
            } else {
                context.print(
                    "HTA: not run, or it failed (install it: python3 -m venv .venv-hta && .venv-hta/bin/pip install HolisticTraceAnalysis)"
                )
            }
            context.print(
                String(
                    format:
                        "timeline first frame: %.1f ms (open, stored lanes, render at 120×36; the report runs beside it)",
                    timeline.firstFrame))
            if let zoomed = timeline.zoomedFrame {
                context.print(
                    String(
                        format: "timeline zoomed until its events are read: %.1f ms for the frame from %d events",
                        zoomed, timeline.zoomedEvents))
            }
            context.print(
                String(
                    format: "report (breakdown, kernels): %.2f s the first time, from every event; %.1f ms once kept",
                    reportSeconds, reportAgain))
        }

        static func fileBytes(_ path: String) -> Int {
            [path, path + "-wal"].reduce(0) {
                $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
            }
        }

        /// HTA's TraceAnalysis over `directory`, in its own process: seconds and peak RSS (bytes).
        static func htaLoad(_ directory: String, python: String) -> (seconds: Double, rss: Double)? {
            let output = BenchCommand.standardOutput(of: [
                python, "-c",
                [
                    "import os, resource, sys, time", "os.environ.setdefault('OMP_NUM_THREADS', '1')",
                    "from hta.trace_analysis import TraceAnalysis", "t = time.perf_counter()",
                    "TraceAnalysis(trace_dir=sys.argv[1])",
                    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)",
                ].joined(separator: "\n"),
                directory,
            ])
            let fields = (output ?? "").split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            guard fields.count >= 2 else { return nil }
            return (fields[fields.count - 2], fields[fields.count - 1])
        }

        /// Writes a Kineto trace of about `megabytes` MB; its size and how many events it holds.
        static func writeTrace(to path: String, megabytes: Int) throws -> (bytes: Int, events: Int) {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                let handle = FileHandle(forWritingAtPath: path)
            else { throw CommandFailure("bench profiles: cannot write \(path)") }
            defer { try? handle.close() }
            let target = max(1, megabytes) * 1_000_000
            var random = SplitMix64(seed: 0x5EED_2024)
            var text = """
                {
                  "schemaVersion": 1,
                  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920, "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "numSms": 108}],
                  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
                  "record_shapes": 1,
                  "traceEvents": [

                """
            var written = 0
            var events = 0
            var correlation = 1
            var clock: Int64 = 1_712_195_498_000_000_000  // ns since the epoch
            var gpuClock = clock
            let kernels = [
                ("ampere_sgemm_128x64_tn", "aten::mm"),
                (
                    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                    "aten::add"
                ),
                (
                    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
                    "aten::layer_norm"
                ),
                (
                    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4::Params)",
                    "aten::addmm"
                ),
                (
                    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
                    "aten::_softmax"
                ),
                (
                    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
                    "aten::sum"
                ),
            ]
            func time(_ ns: Int64) -> String {
                let fraction = String(ns % 1000)
                return "\(ns / 1000).\(String(repeating: "0", count: 3 - fraction.count) + fraction)"
            }
            func emit(_ event: String) throws {
                text += events == 0 ? event : ",\n" + event
                events += 1
                if text.utf8.count >= 1 << 20 {
                    let data = Data(text.utf8)
                    try handle.write(contentsOf: data)
                    written += data.count
                    text = ""
                }
            }
            var step = 1
            while written + text.utf8.count < target {
                let stepStart = clock
                let stepIndex = events
                _ = stepIndex
                for op in 0..<400 {
                    let (kernel, opName) = kernels[Int(random.next() % UInt64(kernels.count))]
                    let external = correlation
                    let opDuration = Int64(20_000 + random.next() % 60_000)
                    try emit(
                        """
                          {
                            "ph": "X", "cat": "cpu_op", "name": "\(opName)", "pid": 4242, "tid": 4242,
                            "ts": \(time(clock)), "dur": \(time(opDuration)),
                            "args": {
                              "External id": \(external), "Record function id": 0, "Ev Idx": \(op), "Input Dims": [[32, 512], [512, 512]], "Input type": ["float", "float"]
                            }
                          }
                        """)
                    let launch = clock + opDuration / 3
                    let launchDuration = Int64(4_000 + random.next() % 6_000)
                    try emit(
                        """
                          {
                            "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
                            "ts": \(time(launch)), "dur": \(time(launchDuration)),
                            "args": {
                              "External id": \(external), "cbid": 211, "correlation": \(correlation)
                            }
                          }
                        """)
                    let nccl = op % 100 == 99
                    gpuClock = max(gpuClock + Int64(1_000 + random.next() % 3_000), launch + launchDuration + 2_000)
                    let kernelDuration =
                        nccl ? Int64(400_000 + random.next() % 200_000) : Int64(3_000 + random.next() % 90_000)
                    let stream = nccl ? 20 : 7
                    let name =
                        nccl ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" : kernel
                    try emit(
                        """
                          {
                            "ph": "X", "cat": "kernel", "name": "\(name)", "pid": 0, "tid": \(stream),
                            "ts": \(time(gpuClock)), "dur": \(time(kernelDuration)),
                            "args": {
                              "External id": \(external), "queued": 0, "device": 0, "context": 1, "stream": \(stream), "correlation": \(correlation), "registers per thread": 128, "shared memory": 16384, "blocks per SM": 2.370370, "warps per SM": 9.481481, "grid": [256, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 14
                            }
                          }
                        """)
                    try emit(
                        """
                          {
                            "ph": "s", "id": \(correlation), "pid": 4242, "tid": 4242, "ts": \(time(launch)), "cat": "ac2g", "name": "ac2g"
                          }
                        """)
                    try emit(
                        """
                          {
                            "ph": "f", "id": \(correlation), "pid": 0, "tid": \(stream), "ts": \(time(gpuClock)), "cat": "ac2g", "name": "ac2g", "bp": "e"
                          }
                        """)
                    if !nccl { gpuClock += kernelDuration }
                    correlation += 1
                    clock += opDuration + Int64(random.next() % 5_000)
                }
                try emit(
                    """
                      {
                        "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#\(step)", "pid": 4242, "tid": 4242,
                        "ts": \(time(stepStart)), "dur": \(time(clock - stepStart)),
                        "args": {
                          "External id": \(correlation), "Record function id": 0, "Ev Idx": 0
                        }
                      }
                    """)
                correlation += 1
                step += 1
            }
            text += """

                  ],
                  "traceName": "\(path)",
                  "displayTimeUnit": "ms",
                  "baseTimeNanoseconds": 1712195400000000000
                }

                """
            let data = Data(text.utf8)
            try handle.write(contentsOf: data)
            written += data.count
            return (written, events)
        }
    }
}
