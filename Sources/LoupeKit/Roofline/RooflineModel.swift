import Foundation
import LoupeStore

/// What a roofline shows: machine profiles (this CPU, imported GPUs), each with its roofs and the
/// kernels measured against it, and how each kernel sits under them. Pure values, so the panel,
/// `roofline show` and `roofline export` agree.
package struct RooflineModel: Hashable, Sendable {
    /// A roof: `compute` in GFLOP/s for a precision, or `memory` in GB/s for a level (with the
    /// working-set sizes its plateau spans, when measured).
    package struct Ceiling: Hashable, Sendable {
        package var kind: String
        package var name: String
        package var value: Double
        package var precision: String?
        package var provenance: String
        package var smallestBytes: Int?
        package var largestBytes: Int?

        package init(
            kind: String, name: String, value: Double, precision: String? = nil, provenance: String = "",
            smallestBytes: Int? = nil, largestBytes: Int? = nil
        ) {
            self.kind = kind
            self.name = name
            self.value = value
            self.precision = precision
            self.provenance = provenance
            self.smallestBytes = smallestBytes
            self.largestBytes = largestBytes
        }
    }

    /// A measured kernel: whole-machine time, FLOPs per precision, bytes moved.
    package struct Point: Hashable, Sendable {
        package var name: String
        package var suite: String
        package var shape: String
        package var seconds: Double
        package var flops: [String: Double]
        package var bytes: Double
        /// The data its passes re-read (picks the memory level), when known.
        package var footprintBytes: Int?
        /// Bytes moved at each memory level, when counted apart (Nsight Compute's L1, L2, DRAM).
        package var bytesByLevel: [String: Double]
        /// The stored run it comes from, when it does.
        package var runID: Int64?

        package init(
            name: String, suite: String = "", shape: String = "", seconds: Double, flops: [String: Double],
            bytes: Double, footprintBytes: Int? = nil, bytesByLevel: [String: Double] = [:], runID: Int64? = nil
        ) {
            self.runID = runID
            self.bytesByLevel = bytesByLevel
            self.name = name
            self.suite = suite
            self.shape = shape
            self.seconds = seconds
            self.flops = flops
            self.bytes = bytes
            self.footprintBytes = footprintBytes
        }
    }

    /// One machine's roofs and kernels.
    package struct Profile: Hashable, Sendable {
        package var name: String
        /// `cpu` or `gpu`.
        package var kind: String
        package var ceilings: [Ceiling]
        package var points: [Point]
        /// Stored values of the profile that do not read back (its bandwidth sweep), each naming
        /// its row and column: the roofs show without what they held.
        package var unreadable: [StoredValueError] = []

        package init(name: String, kind: String, ceilings: [Ceiling], points: [Point]) {
            self.name = name
            self.kind = kind
            self.ceilings = ceilings
            self.points = points
        }
    }

    /// A kernel placed under a profile's roofs at one precision.
    package struct Placement: Hashable, Sendable {
        package var point: Point
        /// nil when the kernel has no FLOPs of the precision (listed, not plotted).
        package var gflopsPerSecond: Double?
        package var flopsPerByte: Double?
        package var level: String?
        package var attainable: Double?
        package var fraction: Double?
        package var bound: String?
    }

    /// A kernel at one memory level (``Profile/levelPlacements(_:precision:)``).
    package struct LevelPlacement: Hashable, Sendable {
        package var level: String
        package var flopsPerByte: Double
        package var gflopsPerSecond: Double
        package var fraction: Double?
    }

    package var profiles: [Profile]

    package init(profiles: [Profile]) { self.profiles = profiles }
}

extension RooflineModel.Point {
    /// GFLOP/s at `precision`; nil without FLOPs of it or a time.
    package func gflopsPerSecond(_ precision: String) -> Double? {
        guard let flops = flops[precision], flops > 0, seconds > 0 else { return nil }
        return flops / seconds / 1e9
    }

    /// FLOP/byte at `precision` over `bytes` (all its traffic unless a level's is given); nil
    /// without FLOPs of it or bytes.
    package func flopsPerByte(_ precision: String, bytes: Double? = nil) -> Double? {
        let moved = bytes ?? self.bytes
        guard let flops = flops[precision], flops > 0, moved > 0 else { return nil }
        return flops / moved
    }
}

extension RooflineModel.Point {
    /// The shape as tables show it. An Nsight Compute import stores its launches' IDs
    /// (`launches 0,4,8`), which read as a count: they show as `3 launches`, or `launch #0`.
    package var shownShape: String {
        guard shape.hasPrefix("launches ") else { return shape }
        let ids = shape.dropFirst("launches ".count).split(separator: ",")
        return ids.count == 1 ? "launch #\(ids[0])" : "\(ids.count) launches"
    }
}

extension RooflineModel {
    /// The import or run (`suite`) a kernel is compared against: its run of the same kernel at
    /// the same shape (any launch, for an Nsight Compute import), wherever it is plotted.
    package func baseline(for point: Point, suite: String) -> Point? {
        guard point.suite != suite else { return nil }
        let candidates = profiles.flatMap(\.points).filter { $0.suite == suite && $0.name == point.name }
        if let same = candidates.first(where: { $0.shape == point.shape }) { return same }
        // Nsight Compute imports name a kernel's launches, not its shape: those match by name.
        let launches = { (shape: String) in shape.isEmpty || shape.hasPrefix("launches ") }
        return launches(point.shape) ? candidates.first { launches($0.shape) } : nil
    }

    /// Only the points of these runs, and only the profiles that hold one (a focus).
    package func keeping(runs ids: Set<Int64>) -> RooflineModel {
        RooflineModel(
            profiles: profiles.compactMap { profile in
                var kept = profile
                kept.points = profile.points.filter { $0.runID.map(ids.contains) ?? false }
                return kept.points.isEmpty ? nil : kept
            })
    }

    /// How many kernels `suite` has, over every profile.
    package func kernelCount(suite: String) -> Int {
        profiles.reduce(0) { $0 + $1.points.filter { $0.suite == suite }.count }
    }
}

extension RooflineModel.Profile {
    package var memoryCeilings: [RooflineModel.Ceiling] { ceilings.filter { $0.kind == "memory" } }
    package var computeCeilings: [RooflineModel.Ceiling] { ceilings.filter { $0.kind == "compute" } }

    /// The precisions to plot: those the kernels have FLOPs in (FP32 first), then the roofs' others.
    package var precisions: [String] {
        let fromPoints = Set(points.flatMap { $0.flops.filter { $0.value > 0 }.keys }).sorted {
            ($0 == "FP32" ? 0 : 1, $0) < ($1 == "FP32" ? 0 : 1, $1)
        }
        var seen = fromPoints
        for precision in computeCeilings.compactMap(\.precision) where !seen.contains(precision) {
            seen.append(precision)
        }
        return seen.isEmpty ? ["FP32"] : seen
    }

    /// The compute roof for `precision`: its non-tensor ceiling, else its tensor one; nil when
    /// the profile has none for it.
    package func peak(_ precision: String) -> RooflineModel.Ceiling? {
        let matching = computeCeilings.filter {
            $0.precision == precision || ($0.precision == nil && precision == "FP32")
        }
        return matching.first { !$0.name.contains("tensor") } ?? matching.first
    }

    /// The memory level a kernel's data lives in: the first plateau that reaches its footprint,
    /// or the slowest level when the footprint or the plateau sizes are unknown.
    package func level(for point: RooflineModel.Point) -> RooflineModel.Ceiling? {
        let memory = memoryCeilings
        let slowest = memory.min { $0.value < $1.value }
        guard let footprint = point.footprintBytes else { return slowest }
        let sized = memory.filter { $0.largestBytes != nil }.sorted {
            ($0.smallestBytes ?? 0) < ($1.smallestBytes ?? 0)
        }
        return sized.first { $0.largestBytes! >= footprint } ?? slowest
    }

    /// Every kernel placed at `precision`.
    package func placements(_ precision: String) -> [RooflineModel.Placement] {
        let peak = self.peak(precision)?.value
        return points.map { point in
            var placement = RooflineModel.Placement(point: point)
            guard let rate = point.gflopsPerSecond(precision) else { return placement }
            placement.gflopsPerSecond = rate
            guard let intensity = point.flopsPerByte(precision) else { return placement }
            placement.flopsPerByte = intensity
            guard let peak, let level = level(for: point) else { return placement }
            let attainable = min(peak, level.value * intensity)
            placement.level = level.name
            placement.attainable = attainable
            placement.fraction = rate / attainable
            placement.bound = intensity < peak / level.value ? "memory" : "compute"
            return placement
        }
    }

    /// A kernel at every memory level that counted its bytes (L1, L2, DRAM), as Nsight
    /// Compute's hierarchical roofline plots it: the same GFLOP/s at each level's FLOP/byte,
    /// and the fraction of what that level's roof allows where the profile has one.
    package func levelPlacements(_ point: RooflineModel.Point, precision: String) -> [RooflineModel.LevelPlacement] {
        guard let rate = point.gflopsPerSecond(precision) else { return [] }
        let peak = self.peak(precision)?.value
        let roofs = Dictionary(memoryCeilings.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        // A datasheet names the DRAM roof by its memory (HBM2, HBM3): Nsight Compute's DRAM bytes
        // are judged against it, under its name.
        let dramRoof =
            roofs["DRAM"] != nil
            ? "DRAM" : memoryCeilings.filter { $0.name != "L1" && $0.name != "L2" }.min { $0.value < $1.value }?.name
        // Levels with a roof, then counted levels without one (no fraction).
        var order = memoryCeilings.sorted { $0.value > $1.value }.map(\.name)
        for level in ["L1", "L2", "DRAM"] where roofs[level] == nil && !(level == "DRAM" && dramRoof != nil) {
            order.append(level)
        }
        // Shown nearest the cores first: L1, L2, then DRAM.
        let rank = ["L1": 0, "L2": 1]
        order = order.enumerated().sorted { (rank[$0.element] ?? 2, $0.offset) < (rank[$1.element] ?? 2, $1.offset) }
            .map(\.element)
        return order.compactMap { level in
            let counted = level == dramRoof ? "DRAM" : level
            guard let bytes = point.bytesByLevel[counted], let intensity = point.flopsPerByte(precision, bytes: bytes)
            else { return nil }
            let attainable = roofs[level].map { min(peak ?? .infinity, $0 * intensity) }
            return RooflineModel.LevelPlacement(
                level: level, flopsPerByte: intensity, gflopsPerSecond: rate,
                fraction: attainable.flatMap { $0.isFinite ? rate / $0 : nil })
        }
    }

    /// The points and ceilings as CSV (one row each), for a spreadsheet or a plotting script.
    /// The file name an export of this profile at `precision` is written to:
    /// `roofline-<profile slug>-<precision>.csv` (the panel's `e` and `loupe roofline export`).
    package func exportName(_ precision: String) -> String {
        let slug = String(
            name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }.split(separator: "-").joined(
                separator: "-"
            ).prefix(40))
        return "roofline-\(slug)-\(precision.lowercased()).csv"
    }

    package func csv(_ precision: String) -> String {
        var lines = [
            "type,name,shape,suite,precision,level,seconds,gflops_per_second,flop_per_byte,attainable_gflops_per_second,fraction_of_attainable,bound,value,unit,provenance"
        ]
        func field(_ text: String) -> String {
            text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        func number(_ value: Double?) -> String { value.map { String(format: "%.6g", $0) } ?? "" }
        for ceiling in ceilings {
            lines.append(
                [
                    "ceiling", field(ceiling.name), "", "", ceiling.precision ?? "",
                    ceiling.kind == "memory" ? ceiling.name : "",
                    "", "", "", "", "", "", number(ceiling.value), ceiling.kind == "memory" ? "GB/s" : "GFLOP/s",
                    field(ceiling.provenance),
                ].joined(separator: ","))
        }
        for placement in placements(precision) {
            let point = placement.point
            lines.append(
                [
                    "kernel", field(point.name), field(point.shape), field(point.suite), precision,
                    placement.level ?? "",
                    number(point.seconds), number(placement.gflopsPerSecond), number(placement.flopsPerByte),
                    number(placement.attainable), number(placement.fraction), placement.bound ?? "", "", "", "",
                ].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
