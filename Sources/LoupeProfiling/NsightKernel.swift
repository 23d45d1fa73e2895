import Foundation
import LoupeBase

/// A GPU kernel from an Nsight Compute CSV export, its launches aggregated.
package struct NsightKernel: Hashable, Sendable {
    package var name: String
    package var device: String
    /// The `ID` of every launch of this kernel in the file.
    package var launchIDs: [String]
    /// The summed `gpu__time_duration.sum` of the launches that have it (`timedLaunches`).
    package var nanoseconds: Double
    /// How many launches carry `gpu__time_duration.sum`; fewer than `launchIDs.count` means
    /// `nanoseconds` is not the kernel's whole time (0 of them: its time is unknown).
    package var timedLaunches = 0
    /// FP32, FP64 and FP16 FLOPs from the SASS instruction counters (add + mul + 2 × fma).
    package var flops: [String: Double]
    /// Bytes moved per memory level, from `dram__bytes.sum` (and `lts__t_bytes.sum`,
    /// `l1tex__t_bytes.sum` when present).
    package var bytes: [String: Double]
    /// The device's ceilings from the export's `peak_sustained` metrics at the profiled clock:
    /// GFLOP/s per precision (FP32, FP64, FP16), GB/s for DRAM.
    package var peaks: [String: Double] = [:]
}
