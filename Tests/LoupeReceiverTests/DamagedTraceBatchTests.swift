import Foundation
import GRDB
import LoupeKit
import LoupeStore
import SwiftProtobuf
import Testing

@testable import LoupeOTLP
@testable import LoupeReceiver

/// Requests that the ingest's writer takes in one batch, one of them adding to a stored trace
/// whose `metadata_json` was damaged by hand (a raw `UPDATE` on the real workspace file): the
/// damaged trace refuses its own request, naming the trace and column, and the other request in
/// the batch is stored and acknowledged as if it had come alone.
@Suite(.serialized) struct DamagedTraceBatchTests {
    @Test func aDamagedTraceRefusesOnlyItsOwnRequestInABatch() async throws {
        let rx = try await RunningReceiver(busyTimeout: 900)
        let damagedTrace = "0af7651916cd43dd8448eb211c80319c"
        let fineTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let damagedRun = Requests.agentRun(trace: damagedTrace)
        // The root of one trace is stored, then its metadata damaged.
        #expect(try await rx.post(try Requests.request([damagedRun[2]]).serializedData()).status == 200)
        let damagedID = try #require(try rx.traces().first { $0.externalID == damagedTrace }?.id)
        let tables = rx.workspace.traces
        _ = try tables.database.writeStatements { sql in
            try sql.execute(
                "UPDATE traces SET metadata_json = ? WHERE id = ?", [.text(#"{"task":"#), .integer(damagedID)])
        }

        // Another connection holds the write lock: the writer takes the first request and waits
        // on it, so the next two queue up and are taken together once the lock goes.
        let release = try rx.holdWriteLock()
        let ingest = rx.receiver.ingest
        let first = Task { try await rx.post(try Requests.request(Requests.agentRun()).serializedData()) }
        try await waitUntil("the writer to take the first request") {
            ingest.statistics.queued > 0 && ingest.statistics.waiting == 0
        }
        let toDamaged = Task { try await rx.post(try Requests.request([damagedRun[0]]).serializedData()) }
        let toFine = Task {
            try await rx.post(try Requests.request(Requests.agentRun(trace: fineTrace)).serializedData())
        }
        try await waitUntil("two requests to wait for the writer") { ingest.statistics.waiting >= 2 }
        release()

        #expect(try await first.value.status == 200)
        #expect(try await toFine.value.status == 200)
        let refused = try await toDamaged.value
        #expect(refused.status == 503)
        let message = try Google_Rpc_Status(serializedBytes: refused.body).message
        #expect(
            message.contains("unreadable metadata (trace \(damagedID), column metadata_json)"), "\(message)")
        let spans = Dictionary(uniqueKeysWithValues: try rx.traces().map { ($0.externalID, $0.spanCount) })
        #expect(spans == [Requests.trace: 3, fineTrace: 3, damagedTrace: 1])
        #expect(ingest.statistics.requests == 3)

        // Nothing is lost: repaired, the refused request, sent again, is stored.
        _ = try tables.database.writeStatements { sql in
            try sql.execute(
                "UPDATE traces SET metadata_json = ? WHERE id = ?", [.text(#"{"task":"arith"}"#), .integer(damagedID)])
        }
        #expect(try await rx.post(try Requests.request([damagedRun[0]]).serializedData()).status == 200)
        #expect(try rx.traces().first { $0.externalID == damagedTrace }?.spanCount == 2)
        try await rx.stop()
    }
}
