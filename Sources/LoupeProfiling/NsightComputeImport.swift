import Foundation
import LoupeBase

/// Reads `ncu --csv` exports: the details page (one row per launch × metric, current layout
/// with or without rule columns, and the older one with `Kernel Time` and trailing commas) and
/// the raw page (`--page raw`: one column per metric, a units row). Tolerates `==PROF==` lines
/// and program output before the header, thousands separators, and unit prefixes.
package enum NsightComputeImport {
    static let precisions: [(name: String, prefix: String)] = [("FP32", "f"), ("FP64", "d"), ("FP16", "h")]
    /// The GPU's marketing name, a text metric (replaces the `Device` index when present).
    static let displayNameMetric = "device__attribute_display_name"
    static let memoryMetrics: [(level: String, metric: String)] = [
        ("DRAM", "dram__bytes.sum"), ("L2", "lts__t_bytes.sum"), ("L1", "l1tex__t_bytes.sum"),
    ]
    /// The precision key of the tensor pipe's FLOPs in ``NsightKernel/flops``.
    package static let tensorPrecision = "Tensor"
    /// FLOPs per tensor-pipe instruction (`sm__inst_executed_pipe_tensor.sum`): 512, the NERSC
    /// roofline method's convention (its `postprocess.py`, and Nsight Compute's hierarchical
    /// tensor roofline's `…_pipe_tensor_x512`), which is a V100 HMMA.884 (8 × 8 × 4 × 2). The
    /// true figure depends on the instruction's shape and the architecture (an A100 HMMA.16816
    /// does 16 × 8 × 16 × 2 = 4096), which the counter does not say.
    package static let tensorFLOPsPerInstruction = 512.0

    package static func parse(_ text: String, file: String) throws(NsightImportError) -> [NsightKernel] {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(
            String.init)
        guard let headerIndex = lines.firstIndex(where: { $0.hasPrefix("\"ID\"") || $0.hasPrefix("ID,") }) else {
            let permission = lines.contains { $0.contains("ERR_NVGPUCTRPERM") }
            throw NsightImportError(
                file: file, line: nil,
                message: permission
                    ? "no CSV header: ncu reported ERR_NVGPUCTRPERM (no permission for GPU performance counters); profile as root or enable counter access for users, then export again"
                    : "no CSV header (a line starting with \"ID\") was found; export with ncu --csv (--page details or --page raw)"
            )
        }
        let header = splitCSV(lines[headerIndex])
        var rows: [(line: Int, fields: [String])] = []
        for index in (headerIndex + 1)..<lines.count where !lines[index].trimmingCharacters(in: .whitespaces).isEmpty {
            if lines[index].hasPrefix("==") { continue }
            rows.append((index + 1, splitCSV(lines[index])))
        }
        if header.contains("Metric Name") {
            return try details(header: header, rows: rows, file: file)
        }
        return try raw(header: header, rows: rows, file: file)
    }

    // MARK: - Layouts

    private static func details(header: [String], rows: [(line: Int, fields: [String])], file: String)
        throws(NsightImportError) -> [NsightKernel]
    {
        func column(_ name: String) throws(NsightImportError) -> Int {
            guard let index = header.firstIndex(of: name) else {
                throw NsightImportError(file: file, line: nil, message: "the details header has no \"\(name)\" column")
            }
            return index
        }
        let id = try column("ID")
        let kernel = try column("Kernel Name")
        let metric = try column("Metric Name")
        let unit = try column("Metric Unit")
        let value = try column("Metric Value")
        let device = header.firstIndex(of: "Device")
        var launches: [String: (kernel: String, device: String, metrics: [String: Double])] = [:]
        var order: [String] = []
        for (line, fields) in rows {
            // Rule rows carry advice, no metric; short rows have nothing to read.
            guard fields.count > max(id, kernel, metric, unit, value), !fields[metric].isEmpty else { continue }
            let launch = fields[id]
            if launches[launch] == nil {
                order.append(launch)
                launches[launch] = (fields[kernel], device.map { fields.count > $0 ? fields[$0] : "" } ?? "", [:])
            }
            if fields[metric] == displayNameMetric {
                launches[launch]?.device = fields[value]
                continue
            }
            guard isRead(fields[metric]),
                let number = try number(
                    fields[value], unit: fields[unit], file: file, line: line,
                    column: "\"Metric Value\" (\(fields[metric]))")
            else { continue }
            launches[launch]?.metrics[fields[metric]] = number
        }
        return try aggregate(
            order.compactMap { launch in launches[launch].map { (launch, $0.kernel, $0.device, $0.metrics) } },
            file: file)
    }

    private static func raw(header: [String], rows: [(line: Int, fields: [String])], file: String)
        throws(NsightImportError) -> [NsightKernel]
    {
        guard let kernel = header.firstIndex(of: "Kernel Name"), let id = header.firstIndex(of: "ID") else {
            throw NsightImportError(
                file: file, line: nil, message: "the raw header has no \"ID\" and \"Kernel Name\" columns")
        }
        guard let unitsRow = rows.first else { return [] }
        let device = header.firstIndex(of: "Device")
        var launches: [(String, String, String, [String: Double])] = []
        for (line, fields) in rows.dropFirst() {
            guard fields.count > max(id, kernel) else {
                throw NsightImportError(
                    file: file, line: line,
                    message: "the row has \(fields.count) fields, fewer than the header's \(header.count)")
            }
            var metrics: [String: Double] = [:]
            var deviceName = device.map { fields.count > $0 ? fields[$0] : "" } ?? ""
            for (index, name) in header.enumerated() where name.contains("__") && index < fields.count {
                if name == displayNameMetric {
                    deviceName = fields[index]
                    continue
                }
                guard isRead(name) else { continue }
                let unit = index < unitsRow.fields.count ? unitsRow.fields[index] : ""
                if let number = try number(fields[index], unit: unit, file: file, line: line, column: "\"\(name)\"") {
                    metrics[name] = number
                }
            }
            launches.append((fields[id], fields[kernel], deviceName, metrics))
        }
        return try aggregate(launches, file: file)
    }

    /// Sums launches of the same kernel (by name), keeping their IDs.
    private static func aggregate(
        _ launches: [(id: String, kernel: String, device: String, metrics: [String: Double])], file: String
    ) throws(NsightImportError) -> [NsightKernel] {
        var kernels: [String: NsightKernel] = [:]
        var order: [String] = []
        for launch in launches {
            if kernels[launch.kernel] == nil {
                order.append(launch.kernel)
                kernels[launch.kernel] = NsightKernel(
                    name: launch.kernel, device: launch.device, launchIDs: [], nanoseconds: 0, flops: [:], bytes: [:])
            }
            for (name, value) in peaks(launch.metrics) {
                kernels[launch.kernel]!.peaks[name] = max(kernels[launch.kernel]!.peaks[name] ?? 0, value)
            }
            kernels[launch.kernel]!.launchIDs.append(launch.id)
            if let (nanoseconds, source) = time(launch.metrics) {
                kernels[launch.kernel]!.nanoseconds += nanoseconds
                kernels[launch.kernel]!.timedLaunches += 1
                kernels[launch.kernel]!.timeSources.insert(source)
            }
            // Stored as Int64 nanoseconds: a total past that is a corrupt export, not a kernel.
            guard kernels[launch.kernel]!.nanoseconds < 0x1p63 else {
                throw NsightImportError(
                    file: file, line: nil,
                    message:
                        "kernel \(launch.kernel): its time totals \(kernels[launch.kernel]!.nanoseconds) ns, more than 292 years; the export is damaged"
                )
            }
            for (precision, count, source) in flops(launch.metrics) {
                kernels[launch.kernel]!.flops[precision, default: 0] += count
                kernels[launch.kernel]!.flopSources[precision] = source
            }
            for (level, metric) in memoryMetrics {
                if let bytes = launch.metrics[metric] { kernels[launch.kernel]!.bytes[level, default: 0] += bytes }
            }
        }
        return order.compactMap { kernels[$0] }
    }

    /// One launch's time in nanoseconds and where it came from: `gpu__time_duration.sum`, else
    /// `sm__cycles_elapsed.avg` ÷ `sm__cycles_elapsed.avg.per_second` (else the `smsp__` pair), as
    /// the NERSC roofline method derives it; nil when neither is there (cycles without a non-zero
    /// clock included).
    static func time(_ metrics: [String: Double]) -> (nanoseconds: Double, source: NsightKernel.TimeSource)? {
        if let nanoseconds = metrics["gpu__time_duration.sum"] { return (nanoseconds, .duration) }
        for (unit, source) in [("sm", NsightKernel.TimeSource.smCycles), ("smsp", .smspCycles)] {
            if let cycles = metrics["\(unit)__cycles_elapsed.avg"],
                let perSecond = metrics["\(unit)__cycles_elapsed.avg.per_second"], perSecond > 0
            {
                return (cycles / perSecond * 1e9, source)
            }
        }
        return nil
    }

    /// One launch's FLOPs per precision and where they came from: add + mul + 2 × fma from the
    /// SASS counters (each the `sm__` metric, else the `smsp__` one: both count the whole GPU, so
    /// never both), and ``tensorFLOPsPerInstruction`` × the tensor pipe's instructions. A
    /// precision without any of its counters is left out.
    static func flops(_ metrics: [String: Double]) -> [(
        precision: String, flops: Double, source: NsightKernel.FLOPSource
    )] {
        func counter(_ name: String) -> Double? { metrics["sm__\(name)"] ?? metrics["smsp__\(name)"] }
        var result: [(String, Double, NsightKernel.FLOPSource)] = []
        for (name, prefix) in precisions {
            let count = { (op: String) in counter("sass_thread_inst_executed_op_\(prefix)\(op)_pred_on.sum") }
            guard count("add") != nil || count("mul") != nil || count("fma") != nil else { continue }
            result.append((name, (count("add") ?? 0) + (count("mul") ?? 0) + 2 * (count("fma") ?? 0), .sassCounters))
        }
        if let instructions = counter("inst_executed_pipe_tensor.sum") {
            result.append((tensorPrecision, tensorFLOPsPerInstruction * instructions, .tensorPipe))
        }
        return result
    }

    /// Ceilings from one launch's metrics: `…_ffma_pred_on.sum.peak_sustained` (per cycle) ×
    /// 2 × `sm__cycles_elapsed.avg.per_second`, and `dram__bytes.sum.peak_sustained` ×
    /// `dram__cycles_elapsed.avg.per_second`.
    package static func peaks(_ metrics: [String: Double]) -> [String: Double] {
        var peaks: [String: Double] = [:]
        if let clock = metrics["sm__cycles_elapsed.avg.per_second"], clock > 0 {
            for (name, prefix) in precisions {
                if let fma = metrics["sm__sass_thread_inst_executed_op_\(prefix)fma_pred_on.sum.peak_sustained"] {
                    peaks[name] = fma * 2 * clock / 1e9
                }
            }
        }
        // Each level's bytes per cycle at its own clock (L1 runs at the SM clock when its own
        // is not exported), as the NERSC roofline method computes them.
        for (level, unit) in [("DRAM", "dram"), ("L2", "lts"), ("L1", "l1tex")] {
            let perCycle =
                metrics["\(unit)__bytes.sum.peak_sustained"] ?? metrics["\(unit)__t_bytes.sum.peak_sustained"]
            let clock =
                metrics["\(unit)__cycles_elapsed.avg.per_second"]
                ?? (level == "L1" ? metrics["sm__cycles_elapsed.avg.per_second"] : nil)
            if let perCycle, let clock, clock > 0 { peaks[level] = perCycle * clock / 1e9 }
        }
        return peaks
    }

    // MARK: - Values

    /// Whether Loupe reads `metric` (time, cycles, FLOP and tensor-pipe counters, bytes, peaks
    /// and clocks, in their `sm__` and `smsp__` forms): only those must be numbers; an export's
    /// other metrics include text (cache configs, names).
    static func isRead(_ metric: String) -> Bool {
        metric == "gpu__time_duration.sum" || metric.hasPrefix("sm__sass_thread_inst_executed_op_")
            || metric.hasPrefix("smsp__sass_thread_inst_executed_op_") || metric.hasPrefix("sm__cycles_elapsed.")
            || metric.hasPrefix("smsp__cycles_elapsed.") || metric.hasPrefix("sm__inst_executed_pipe_tensor")
            || metric.hasPrefix("smsp__inst_executed_pipe_tensor") || metric.hasPrefix("dram__")
            || metric.hasPrefix("lts__t_bytes.") || metric.hasPrefix("lts__cycles_elapsed.")
            || metric.hasPrefix("l1tex__t_bytes.") || metric.hasPrefix("l1tex__cycles_elapsed.")
            || memoryMetrics.contains { $0.metric == metric }
    }

    /// A metric value in base units (bytes, nanoseconds, counts); nil for an empty or `n/a`
    /// field, which is how ncu writes a metric it did not collect.
    ///
    /// - Throws: for any other text that is not a finite, non-negative number: every metric
    ///   read here is a count, a size, a duration or a rate, and reading "abc" or "-5" as 0 would
    ///   put a wrong kernel on the roofline without a word.
    package static func number(_ text: String, unit: String, file: String, line: Int, column: String = "value")
        throws(NsightImportError) -> Double?
    {
        var digits = text.trimmingCharacters(in: .whitespaces)
        if digits.isEmpty || digits.lowercased() == "n/a" { return nil }
        func fail(_ problem: String) -> NsightImportError {
            NsightImportError(file: file, line: line, message: "\(column): metric value '\(text)' \(problem)")
        }
        // Thousands separators: "52,428,800" (or "52.428.800" in some locales, when there is no
        // decimal part); a lone comma before 1-2 digits is a European decimal point.
        let commas = digits.filter { $0 == "," }.count
        let dots = digits.filter { $0 == "." }.count
        if commas > 0 && dots > 0 {
            if digits.lastIndex(of: ",")! > digits.lastIndex(of: ".")! {
                digits = digits.replacingOccurrences(of: ".", with: "").replacingOccurrences(of: ",", with: ".")
            } else {
                digits = digits.replacingOccurrences(of: ",", with: "")
            }
        } else if commas > 0 {
            let tail = digits.split(separator: ",").last.map(String.init) ?? ""
            digits =
                commas == 1 && tail.count != 3
                ? digits.replacingOccurrences(of: ",", with: ".") : digits.replacingOccurrences(of: ",", with: "")
        } else if dots > 1 {
            digits = digits.replacingOccurrences(of: ".", with: "")
        }
        guard let value = Double(digits), value.isFinite else { throw fail("is not a number") }
        guard value >= 0 else { throw fail("is negative (counts, bytes and times cannot be)") }
        let scaled = value * scale(unit)
        guard scaled.isFinite else { throw fail("is too large") }
        return scaled
    }

    static func scale(_ unit: String) -> Double {
        switch unit.trimmingCharacters(in: .whitespaces).lowercased() {
        case "kbyte": return 1e3
        case "mbyte": return 1e6
        case "gbyte": return 1e9
        case "tbyte": return 1e12
        case "kibyte": return 1024
        case "mibyte": return 1024 * 1024
        case "gibyte": return 1024 * 1024 * 1024
        case "usecond": return 1e3
        case "msecond": return 1e6
        case "second": return 1e9
        // Rates (clocks): per second.
        case "cycle/second", "hz": return 1
        case "cycle/msecond", "khz": return 1e3
        case "cycle/usecond", "mhz": return 1e6
        case "cycle/nsecond", "ghz": return 1e9
        default: return 1
        }
    }

    /// One CSV line: commas separate fields, double quotes enclose fields with commas, `""` is
    /// a quote inside one.
    package static func splitCSV(_ line: String) -> [String] {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var characters = Array(line)
        if characters.last == "\r" { characters.removeLast() }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if quoted {
                if character == "\"" {
                    if index + 1 < characters.count, characters[index + 1] == "\"" {
                        current.append("\"")
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
            index += 1
        }
        fields.append(current)
        return fields
    }
}
