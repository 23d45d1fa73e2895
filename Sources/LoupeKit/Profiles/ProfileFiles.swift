import LoupeBase
import LoupeStore

/// What a profile's import kept of its files (`files_json`), read back once when the profile is
/// opened: each rank's thread names and the GPU the trace ran on. A column that does not read
/// back is a ``StoredValueError`` naming the profile, never a profile without thread names.
package struct ProfileFiles: Hashable, Sendable {
    /// Each rank's `thread_names` ("pid/tid" → name).
    package var threadNames: [Int: [String: String]] = [:]
    /// The first GPU's name in the files' `deviceProperties`; nil for a CPU trace.
    package var deviceName: String?

    package init() {}

    package init(_ record: ProfilerTraceRecord) throws(StoredValueError) {
        let row = "profile \(record.id ?? 0)"
        let json = try JSONValue.parse(stored: record.filesJSON, "files", row: row, column: "files_json")
        guard case .array(let files) = json else {
            throw StoredValueError("files", row: row, column: "files_json", reason: "not a JSON array")
        }
        for file in files {
            if let rank = file["rank"]?.int, case .object(let names) = file["thread_names"] ?? .null {
                threadNames[Int(rank)] = names.dictionary.compactMapValues(\.string)
            }
            guard deviceName == nil else { continue }
            if case .array(let devices) = file["device_properties"] ?? .null, let name = devices.first?["name"]?.string
            {
                deviceName = name
            } else if let name = file["device_properties"]?["name"]?.string {
                deviceName = name
            }
        }
    }
}
