import CKernels
import Dispatch
import Foundation
import LoupeBase

/// Measures this machine's ceilings: FP32 peak from an FMA loop, memory bandwidth per level
/// from a triad sweep.
package enum MachineProbe {
    /// FP32 GFLOP/s of the register-only FMA loop (``fp32PeakMethod``) on `threads` threads, run
    /// for about `seconds`.
    package static func fp32Peak(threads: Int, seconds: Double = 0.5) -> Double {
        rate(threads: threads, seconds: seconds, perIteration: Double(loupe_fma_flops_per_iteration())) {
            _ = loupe_fma_peak_f32($0)
        }
    }

    /// Int8 GOP/s (a multiply-add is 2 operations) of the register-only multiply-add loop with
    /// the instruction the int8 kernels use here (``int8PeakMethod``), on `threads` threads.
    package static func int8Peak(threads: Int, seconds: Double = 0.5) -> Double {
        rate(threads: threads, seconds: seconds, perIteration: Double(loupe_int8_ops_per_iteration())) {
            _ = loupe_int8_peak($0)
        }
    }

    /// The loop ``fp32Peak(threads:seconds:)`` runs on this CPU, in words.
    package static var fp32PeakMethod: String { String(cString: loupe_fma_peak_method()) }

    /// The loop ``int8Peak(threads:seconds:)`` runs on this CPU, in words.
    package static var int8PeakMethod: String { String(cString: loupe_int8_peak_method()) }

    /// Billions of operations a second of `loop` on every thread at once: the iteration count is
    /// calibrated on one thread to last about `seconds`.
    private static func rate(
        threads: Int, seconds: Double, perIteration: Double, _ loop: @Sendable @escaping (UInt64) -> Void
    ) -> Double {
        var iterations: UInt64 = 1_000_000
        while true {
            let elapsed = Stopwatch.seconds { loop(iterations) }
            if elapsed >= seconds / 4 {
                iterations = UInt64(Double(iterations) * seconds / elapsed)
                break
            }
            iterations *= 4
        }
        let count = iterations
        let elapsed = Stopwatch.seconds {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in loop(count) }
        }
        return Double(threads) * Double(count) * perIteration / elapsed / 1e9
    }

    /// Triad bandwidth in GB/s for a working set of `bytes` (three Float32 arrays), split over
    /// `threads` threads, best of repeats lasting at least `minimumSeconds` in all.
    package static func triadBandwidth(workingSetBytes bytes: Int, threads: Int, minimumSeconds: Double = 0.2) -> Double
    {
        let count = max(threads * 16, bytes / 12)
        var a = [Float](repeating: 0, count: count)
        let b = [Float](repeating: 1, count: count)
        let c = [Float](repeating: 2, count: count)
        var best = 0.0
        var spent = 0.0
        var repeats = 0
        a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeBufferPointer { bp in
                c.withUnsafeBufferPointer { cp in
                    let chunk = (count + threads - 1) / threads
                    // Small working sets repeat the triad inside each worker, so a timed pass moves
                    // at least 32 MiB and thread dispatch does not dominate the measurement.
                    let inner = max(1, (32 << 20) / max(1, 12 * count))
                    // Safe: each worker reads and writes only its own chunk of the three arrays,
                    // which outlive concurrentPerform.
                    let pointers = (
                        a: UncheckedSendable(ap.baseAddress!),
                        b: UncheckedSendable(UnsafeMutablePointer(mutating: bp.baseAddress!)),
                        c: UncheckedSendable(UnsafeMutablePointer(mutating: cp.baseAddress!))
                    )
                    while spent < minimumSeconds || repeats < 3 {
                        let elapsed = Stopwatch.seconds {
                            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                                let start = thread * chunk
                                let length = max(0, min(chunk, count - start))
                                for _ in 0..<inner {
                                    loupe_triad_f32(
                                        pointers.a.value + start, pointers.b.value + start, pointers.c.value + start, 3,
                                        length)
                                }
                            }
                        }
                        best = max(best, Double(12 * count * inner) / elapsed / 1e9)
                        spent += elapsed
                        repeats += 1
                    }
                }
            }
        }
        precondition(a[count - 1] == 7, "the triad did not run")
        return best
    }

    /// The data caches' sizes in bytes, L1 data first, from sysfs (empty when unknown).
    package static func cacheSizes() -> [Int] {
        let root = "/sys/devices/system/cpu/cpu0/cache"
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter {
            $0.hasPrefix("index")
        }.sorted()
        var sizes: [(level: Int, bytes: Int)] = []
        for entry in entries {
            func read(_ file: String) -> String {
                ((try? String(contentsOfFile: "\(root)/\(entry)/\(file)", encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines)
            }
            guard read("type") != "Instruction", let level = Int(read("level")) else { continue }
            let text = read("size")
            let multiplier = text.hasSuffix("K") ? 1024 : text.hasSuffix("M") ? 1024 * 1024 : 1
            guard let value = Int(text.trimmingCharacters(in: CharacterSet(charactersIn: "KM"))) else { continue }
            sizes.append((level, value * multiplier))
        }
        return sizes.sorted { $0.level < $1.level }.map(\.bytes)
    }
}
