import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// The two backends the Store's tests run every case on: a SQLite file, and a fresh database on
/// the tests' own PostgreSQL server.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A new, empty workspace on this backend.
    func database(_ label: String) throws -> any SQLDatabase {
        switch self {
        case .sqlite:
            return try TemporaryWorkspace.make(label)
        case .postgres:
            let cluster = try PostgresCluster.shared
            let url = try PostgresURL(cluster.url(try cluster.database(label)), environment: [:])
            return try PostgresStore.open(url)
        }
    }
}
