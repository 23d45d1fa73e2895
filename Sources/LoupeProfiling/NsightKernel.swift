import Foundation
import LoupeBase

/// A GPU kernel from an Nsight Compute CSV export, its launches aggregated.
package struct NsightKernel: Hashable, Sendable {
    /// Where a launch's time came from.
    package enum TimeSource: String, CaseIterable, Hashable, Sendable {
        /// `gpu__time_duration.sum`: measured by ncu.
        case duration = "gpu__time_duration.sum"
        /// `sm__cycles_elapsed.avg` ÷ `sm__cycles_elapsed.avg.per_second`, as the NERSC roofline
        /// method derives it (its metric set has no duration).
        case smCycles = "sm__cycles_elapsed.avg ÷ .per_second"
        /// The same quotient from the `smsp__cycles_elapsed` pair, when the `sm__` one is absent.
        case smspCycles = "smsp__cycles_elapsed.avg ÷ .per_second"
    }

    /// Where a precision's FLOPs came from.
    package enum FLOPSource: String, CaseIterable, Hashable, Sendable {
        /// add + mul + 2 × fma from `sm__sass_thread_inst_executed_op_*_pred_on.sum` (or the
        /// `smsp__` counters, which count the same instructions).
        case sassCounters = "SASS counters (add + mul + 2 × fma)"
        /// ``NsightComputeImport/tensorFLOPsPerInstruction`` × `sm__inst_executed_pipe_tensor.sum`
        /// (or `smsp__inst_executed_pipe_tensor.sum`).
        case tensorPipe = "the tensor pipe"
    }

    package var name: String
    package var device: String
    /// The `ID` of every launch of this kernel in the file.
    package var launchIDs: [String]
    /// The summed time of the launches that have one (`timedLaunches`), from `timeSources`.
    package var nanoseconds: Double
    /// How many launches have a time (`gpu__time_duration.sum`, else cycles ÷ clock); fewer than
    /// `launchIDs.count` means `nanoseconds` is not the kernel's whole time (0 of them: its time
    /// is unknown).
    package var timedLaunches = 0
    /// Where the timed launches' times came from; empty when no launch has one.
    package var timeSources: Set<TimeSource> = []
    /// FLOPs per precision: FP32, FP64 and FP16 from the SASS instruction counters (add + mul +
    /// 2 × fma), and `Tensor` from the tensor pipe's instruction count. A precision is present
    /// when the export has its counters, even if they are 0.
    package var flops: [String: Double]
    /// Where each precision in `flops` came from, by the same keys; empty means the export has
    /// no FLOP counters for this kernel.
    package var flopSources: [String: FLOPSource] = [:]
    /// Bytes moved per memory level, from `dram__bytes.sum` (and `lts__t_bytes.sum`,
    /// `l1tex__t_bytes.sum` when present).
    package var bytes: [String: Double]
    /// The device's ceilings from the export's `peak_sustained` metrics at the profiled clock:
    /// GFLOP/s per precision (FP32, FP64, FP16), GB/s for DRAM.
    package var peaks: [String: Double] = [:]
}
