/// What a profiler event is, from its category: what the analyses tell apart.
package enum ProfileEventKind: UInt8, CaseIterable, Codable, Sendable {
    /// A GPU kernel (`kernel`, `Kernel`).
    case kernel = 1
    /// A copy on the GPU's copy engines (`gpu_memcpy`, `Memcpy`).
    case memcpy
    /// A memset on the GPU (`gpu_memset`, `Memset`).
    case memset
    /// A synchronisation the GPU recorded on a stream (`cuda_sync`): `Stream Sync`,
    /// `Event Sync`, `Context Sync`, `Stream Wait Event`.
    case sync
    /// A CUDA or HIP runtime call on the host (`cuda_runtime`, `cuda_driver`, `Runtime`):
    /// `cudaLaunchKernel`, `cudaMemcpyAsync`, `cudaStreamSynchronize`…
    case runtime
    /// A framework operator on the host (`cpu_op`, `Operator`): `aten::mm`, `aten::add_`…
    case cpuOp
    /// A `record_function` range on the host (`user_annotation`), `ProfilerStep#3` included.
    case annotation
    /// The same range as the GPU ran it (`gpu_user_annotation`).
    case gpuAnnotation
    /// A Python function (`python_function`).
    case python
    /// A counter sample (`ph: C`).
    case counter
    /// Anything else with a time (`Trace`, `cuda_profiler_range`, an unknown category).
    case other

    /// The kind of an event of category `category` (as Kineto and older PyTorch write it).
    package init(category: String, phase: UInt8) {
        if phase == UInt8(ascii: "C") {
            self = .counter
            return
        }
        switch category.lowercased() {
        case "kernel": self = .kernel
        case "gpu_memcpy", "memcpy": self = .memcpy
        case "gpu_memset", "memset": self = .memset
        case "cuda_sync": self = .sync
        case "cuda_runtime", "cuda_driver", "runtime", "hip_runtime", "hip_driver", "mtia_runtime": self = .runtime
        case "cpu_op", "operator": self = .cpuOp
        case "user_annotation": self = .annotation
        case "gpu_user_annotation": self = .gpuAnnotation
        case "python_function": self = .python
        default: self = .other
        }
    }

    /// Whether it ran on the GPU (its `pid` is a device and its `tid` a stream).
    package var isGPU: Bool {
        self == .kernel || self == .memcpy || self == .memset || self == .sync || self == .gpuAnnotation
    }

    /// Work a GPU stream ran (kernels, copies, memsets, syncs): what busy time, idle gaps and
    /// launches count. A `gpu_user_annotation` is a range drawn over such work, not work itself.
    package var isStreamWork: Bool { isGPU && self != .gpuAnnotation }

    package var label: String {
        switch self {
        case .kernel: "kernel"
        case .memcpy: "memcpy"
        case .memset: "memset"
        case .sync: "sync"
        case .runtime: "runtime"
        case .cpuOp: "cpu_op"
        case .annotation: "annotation"
        case .gpuAnnotation: "gpu_annotation"
        case .python: "python"
        case .counter: "counter"
        case .other: "other"
        }
    }
}

/// One event of a profiler trace with a time: a complete event (`X`), a `B`/`E` pair, an
/// instant (`i`) or a counter sample (`C`). Times are nanoseconds on the trace's own clock.
package struct ProfileEvent: Hashable, Sendable {
    package var kind: ProfileEventKind
    /// Index into the trace's name table.
    package var name: Int32
    /// Index into the trace's name table: the category as written.
    package var category: Int32
    package var start: Int64
    /// 0 for instants and counters.
    package var duration: Int64
    /// The process, or for GPU events the device. A string `pid` is stored as the negated name
    /// index minus one.
    package var pid: Int64
    /// The thread, or for GPU events the stream (`args.stream` when given); strings as for `pid`.
    package var tid: Int64
    /// Links a runtime launch to the GPU work it started (`args.correlation`); 0 when absent.
    package var correlation: Int64
    /// Links an operator to the runtime calls and kernels it caused (`args["External id"]`).
    package var externalID: Int64
    /// The event's position in the file's `traceEvents`, for messages and for order.
    package var index: Int
    /// `args` as written (JSON), for details on screen; nil when the event has none.
    package var args: String?

    package var end: Int64 { start + duration }

    package init(
        kind: ProfileEventKind, name: Int32, category: Int32, start: Int64, duration: Int64, pid: Int64, tid: Int64,
        correlation: Int64 = 0, externalID: Int64 = 0, index: Int, args: String? = nil
    ) {
        self.kind = kind
        self.name = name
        self.category = category
        self.start = start
        self.duration = duration
        self.pid = pid
        self.tid = tid
        self.correlation = correlation
        self.externalID = externalID
        self.index = index
        self.args = args
    }
}
