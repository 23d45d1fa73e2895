import Foundation
import LoupeBase
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Server-sent events: `field: value` lines, an event per blank line; only `data` matters here
/// (several `data` lines join with newlines; `:` lines are comments).
///
/// Thread-safety: any thread; `feed` and `finish` hold `lock` for all of their work, which is
/// what makes the unchecked conformance true.
package final class SSEParser: @unchecked Sendable {
    private var buffer: [UInt8] = []
    private var data: [String] = []
    private let lock = NSLock()

    package init() {}

    /// The events completed by `chunk` (chunks may split lines and events anywhere).
    package func feed(_ chunk: Data) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(contentsOf: chunk)
        var events: [String] = []
        var start = 0
        while let newline = buffer[start...].firstIndex(of: 0x0A) {
            var line = buffer[start..<newline]
            if line.last == 0x0D { line = line.dropLast() }
            start = newline + 1
            handle(String(decoding: line, as: UTF8.self), into: &events)
        }
        buffer.removeFirst(start)
        return events
    }

    /// Whatever the stream held after its last newline.
    package func finish() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        var events: [String] = []
        if !buffer.isEmpty { handle(String(decoding: buffer, as: UTF8.self), into: &events) }
        buffer = []
        handle("", into: &events)
        return events
    }

    private func handle(_ line: String, into events: inout [String]) {
        if line.isEmpty {
            if !data.isEmpty { events.append(data.joined(separator: "\n")) }
            data = []
        } else if line.hasPrefix("data:") {
            var value = line.dropFirst(5)
            if value.first == " " { value = value.dropFirst() }
            data.append(String(value))
        }
    }
}
