import Foundation
import LoupeStore
import Testing

/// `--workspace postgres://…` read as libpq reads it, the password found where libpq finds it and
/// never shown.
@Suite struct PostgresURLTests {
    @Test func aFullURLKeepsEveryPartAndShowsNoPassword() throws {
        let url = try PostgresURL("postgres://ana:s3cr%40t@db.example:6543/team?sslmode=require", environment: [:])
        #expect(url.host == "db.example" && url.port == 6543 && url.user == "ana" && url.database == "team")
        #expect(url.password == "s3cr@t" && url.sslMode == .require)
        #expect(url.description == "postgres://ana@db.example:6543/team?sslmode=require")
        #expect(!url.description.contains("s3cr"))
    }

    @Test func whatTheURLLeavesOutComesFromTheEnvironmentThenLibpqsDefaults() throws {
        let url = try PostgresURL(
            "postgresql://",
            environment: [
                "PGHOST": "pg", "PGPORT": "5440", "PGUSER": "ci", "PGDATABASE": "loupe", "PGPASSWORD": "from-env",
                "PGSSLMODE": "disable",
            ])
        #expect(url.host == "pg" && url.port == 5440 && url.user == "ci" && url.database == "loupe")
        #expect(url.password == "from-env" && url.sslMode == .disable)
        let bare = try PostgresURL("postgres://bo@localhost", environment: [:], home: "/nonexistent")
        #expect(bare.port == 5432 && bare.database == "bo" && bare.password == nil && bare.sslMode == .prefer)
        // The URL's own password wins over PGPASSWORD.
        #expect(try PostgresURL("postgres://bo:url@h/d", environment: ["PGPASSWORD": "env"]).password == "url")
    }

    @Test func thePasswordFileIsReadAsLibpqReadsItAndIgnoredWhenOthersMayReadIt() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let file = home + "/.pgpass"
        try """
        # comments are skipped
        other:5432:*:ana:wrong-host
        db:5432:team:ana:pa\\:ss\\\\word
        *:*:*:*:fallback
        """.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(try PostgresURL("postgres://ana@db:5432/team", environment: [:], home: home).password == "pa:ss\\word")
        #expect(try PostgresURL("postgres://bo@elsewhere/x", environment: [:], home: home).password == "fallback")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        #expect(try PostgresURL("postgres://ana@db:5432/team", environment: [:], home: home).password == nil)
        #expect(
            try PostgresURL("postgres://ana@db/team", environment: ["PGPASSFILE": file], home: "/nonexistent").password
                == nil)
    }

    @Test func aBadURLIsRefusedSayingWhatIsWrongWithoutItsPassword() throws {
        let cases: [(String, String)] = [
            ("postgres://ana:hunter2@h:99999/db", "port 99999"),
            ("postgres://ana:hunter2@h/db/extra", "more than one part"),
            ("postgres://ana:hunter2@h/db?sslmode=sometimes", "sslmode=sometimes"),
            ("postgres://ana:hunter2@h/db?pool=3", "the parameter pool"),
        ]
        for (text, reason) in cases {
            let error = try #require(throws: WorkspaceError.self) { try PostgresURL(text, environment: [:]) }
            #expect(error.code == .notAWorkspace)
            #expect(error.description.contains(reason), "\(error)")
            #expect(!error.description.contains("hunter2"), "\(error)")
        }
        #expect(PostgresURL.redact("postgres://ana:hunter2@h/db") == "postgres://ana:***@h/db")
        #expect(PostgresURL.redact("postgres://ana@h/db") == "postgres://ana@h/db")
        #expect(PostgresURL.redact("/tmp/w.sqlite") == "/tmp/w.sqlite")
        #expect(PostgresURL.isURL("postgresql://h/db") && !PostgresURL.isURL("w.sqlite"))
    }
}
