import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// `profile import` of what is not a profile, said as such: JSON without `traceEvents`, a pipe or
/// device, a file behind a byte order mark (which is read, not refused).
@Suite struct ProfileImportRefusalTests {
    private static let events =
        #"{"traceEvents": [{"ph": "X", "name": "gemm", "cat": "kernel", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]}"#

    private static func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = try KitFixtures.temporaryDirectory("profile-refusal") + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func jsonWithoutTraceEventsIsRefusedNamingTheFileAndStoresNothing() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let path = try Self.file("summary.json", Array(#"{"schemaVersion": 1, "deviceProperties": []}"#.utf8))
        #expect {
            _ = try ProfileService(workspace: workspace).importFiles([path])
        } throws: { error in
            let text = (error as? ProfileReadError)?.description ?? "\(error)"
            return text.hasPrefix(path) && text.contains("no traceEvents member")
        }
        #expect(try workspace.profilerTraces().isEmpty)
    }

    @Test func aByteOrderMarkBeforeTheJSONIsSteppedOver() throws {
        let workspace = try KitFixtures.workspace("profiles")
        let path = try Self.file("bom.json", [0xEF, 0xBB, 0xBF] + Array(Self.events.utf8))
        #expect(try ProfileService(workspace: workspace).importFiles([path]).events == 1)
    }

    @Test func aPipeOrADeviceIsRefusedAsNotARegularFileWithoutWaiting() throws {
        let workspace = try KitFixtures.workspace("profiles")
        // A FIFO with no writer: opening it for reading would wait forever.
        let fifo = try KitFixtures.temporaryDirectory("profile-fifo") + "/trace.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/zero"] {
            #expect {
                _ = try ProfileService(workspace: workspace).importFiles([path])
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix(path) && text.contains("not a regular file") && !text.contains("NSCocoaError")
            }
        }
        #expect(try workspace.profilerTraces().isEmpty)
    }
}
