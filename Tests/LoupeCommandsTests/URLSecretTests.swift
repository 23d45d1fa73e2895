import Foundation
import GRDB
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeStore
import Testing

/// One table of hostile URLs, each run through every place a URL is shown or stored: the
/// redactors, the real error of `--workspace URL`, the TUI's history row and status line, and an
/// eval run's stored target. The secret appears in none of them.
@Suite(.serialized) struct URLSecretTests {
    struct Hostile: CustomStringConvertible, Sendable {
        /// The password as typed in the URL's userinfo (nil: none there).
        var password: String?
        /// What follows the host: path and query.
        var tail = "/team"
        var host = "127.0.0.1"
        /// Pieces of the secret, each of which must appear nowhere.
        var secrets: [String]
        /// What the `--workspace` error must say, where the URL cannot be used at all.
        var error: String?

        var url: String {
            "postgres://loupe" + (password.map { ":" + $0 } ?? "") + "@\(host):1" + tail
        }
        var description: String { secrets.first ?? url }
    }

    static let table: [Hostile] = [
        Hostile(password: "hashPWa#tailPWa", secrets: ["hashPWa", "tailPWa"]),
        Hostile(password: "slashPWb/tailPWb", secrets: ["slashPWb", "tailPWb"]),
        Hostile(password: "qmarkPWc?tailPWc", secrets: ["qmarkPWc", "tailPWc"]),
        Hostile(password: "atPWd@tailPWd", secrets: ["atPWd", "tailPWd"]),
        Hostile(password: "spacePWe tailPWe", secrets: ["spacePWe", "tailPWe"]),
        Hostile(password: "pctPWf%21tailPWf", secrets: ["pctPWf", "tailPWf"]),
        Hostile(password: "badPWg%zztailPWg", secrets: ["badPWg", "tailPWg"], error: "%-escape"),
        Hostile(password: nil, tail: "/team?password=queryPWh", secrets: ["queryPWh"]),
        Hostile(password: nil, tail: "/team?sslmode=disable&sslpassword=sslPWi", secrets: ["sslPWi"]),
        Hostile(password: "ipv6PWj", host: "[::1]", secrets: ["ipv6PWj"]),
        Hostile(
            password: "mixPWk/#? @tailPWk", tail: "/team?password=mixQPWk", secrets: ["mixPWk", "tailPWk", "mixQPWk"]),
        Hostile(password: nil, secrets: []),
        Hostile(password: "", secrets: []),
        // A raw `&` in a query password: not taken for a parameter, and neither half shown.
        Hostile(password: nil, tail: "/team?password=ampPWl&tailPWl", secrets: ["ampPWl", "tailPWl"], error: "%26"),
        // A raw `@` in a query value is no userinfo's end: the host is the host.
        Hostile(password: nil, tail: "/team?password=atQPWn@tailQPWn", secrets: ["atQPWn", "tailQPWn"]),
        Hostile(password: "appPWm", tail: "/team?application_name=me@work", secrets: ["appPWm"]),
    ]

    private static func expectHidden(_ text: String, _ hostile: Hostile, _ place: String) {
        for secret in hostile.secrets {
            #expect(!text.contains(secret), "\(place) shows \(secret): \(text)")
        }
    }

    @Test(arguments: table) func theRedactorsHideTheWholePassword(_ hostile: Hostile) {
        let url = hostile.url
        Self.expectHidden(PostgresURL.redact(url), hostile, "PostgresURL.redact")
        Self.expectHidden(
            SecretRedactor(secrets: []).redactCredentials(in: "'\(url)'"), hostile, "the history redactor")
        // What is not secret stays: the user and the host.
        #expect(PostgresURL.redact(url).hasPrefix("postgres://loupe"))
        #expect(PostgresURL.redact(url).contains(hostile.host) || !hostile.secrets.isEmpty)
        if hostile.secrets.isEmpty, hostile.password == nil { #expect(PostgresURL.redact(url) == url) }
    }

    @Test(arguments: table) func aWorkspaceURLThatFailsIsShownWithoutItsPassword(_ hostile: Hostile) throws {
        let result = try TestEnvironment.run(
            ["--workspace", hostile.url, "trace", "list"], environment: ["PGPASSWORD": ""])
        #expect(result.status != 0)
        Self.expectHidden(result.output + result.error, hostile, "loupe --workspace")
        if let reason = hostile.error { #expect(result.error.contains(reason), "\(result.error)") }
        #expect(result.error.contains("postgres://loupe"), "the message names the URL: \(result.error)")
    }

    @Test(arguments: table) func theTUIStoresAndShowsNoPassword(_ hostile: Hostile) throws {
        let directory = TestEnvironment.temporaryDirectory()
        let settings = SettingsTables(try Workspace(path: directory + "/w.sqlite"))
        let quoted = "trace list --workspace '\(hostile.url)'"
        let lines =
            [quoted, "trace list --workspace=\"\(hostile.url)\""]
            + (hostile.url.contains(" ") ? [] : ["trace list --workspace \(hostile.url)"])
        for line in lines { try settings.recordHistory(line, source: .tui) }
        let stored = try settings.history(source: .tui)
        #expect(stored.count == lines.count)
        for row in stored {
            Self.expectHidden(row, hostile, "the history row")
            #expect(row.hasPrefix("trace list --workspace"), "\(row)")
        }
        let session = TestEnvironment.session(directory)
        let outcome = CommandExecutor(session: session, isInsideTUI: true).execute(
            quoted, reporter: .detached(), columns: 80)
        let message = try #require(outcome.error)
        Self.expectHidden(message + outcome.output, hostile, "the status line")
        #expect(message.contains("quit and run loupe --workspace postgres://loupe"), "\(message)")
    }

    /// An unquoted password with a space, typed on a `:` line, splits the URL in two words:
    /// refused before anything parses either half, which neither the message nor the history
    /// shows. Alone (a shell split it), the first half is hidden and the cause named.
    @Test func aURLCutAtAnUnquotedSpaceIsRefusedWithoutEitherHalf() throws {
        let line = "trace list --workspace postgres://loupe:cutPWo tailPWo@127.0.0.1:1/team"
        for insideTUI in [true, false] {
            let outcome = CommandExecutor(session: TestEnvironment.session(), isInsideTUI: insideTUI).execute(
                line, reporter: .detached(), columns: 80)
            let message = try #require(outcome.error)
            #expect(message.contains("quote the URL"), "\(message)")
            #expect(!message.contains("cutPWo") && !message.contains("tailPWo"), "\(message)")
        }
        let history = SecretRedactor(secrets: []).redactCredentials(in: line)
        #expect(!history.contains("cutPWo") && !history.contains("tailPWo"), "\(history)")
        #expect(history.hasPrefix("trace list --workspace postgres://loupe:"))
        let error = try #require(throws: WorkspaceError.self) {
            try PostgresURL("postgres://loupe:cutPWo", environment: [:])
        }
        #expect(!error.description.contains("cutPWo"), "\(error)")
        #expect(error.description.contains("write the space as %20"), "\(error)")
        // A port is a port, and an IPv6 host's colons are no password.
        #expect(try PostgresURL("postgres://db:5433/team", environment: [:]).port == 5433)
        #expect(try PostgresURL("postgres://[::1]:5433/team", environment: [:]).port == 5433)
    }

    @Test func anAtInAQueryValueDoesNotEndTheUserinfo() throws {
        let url = try PostgresURL(
            "postgres://ana:p@w@db.example:5433/team?application_name=me@work&password=q@ss", environment: [:])
        #expect(url.host == "db.example")
        #expect(url.port == 5433)
        #expect(url.user == "ana")
        #expect(url.database == "team")
        #expect(url.password == "q@ss")
        // Without a query parameter libpq knows, the last `@` still ends the userinfo.
        let raw = try PostgresURL("postgres://ana:p?w@x@db.example/team", environment: [:])
        #expect(raw.host == "db.example" && raw.password == "p?w@x")
    }

    @Test func aBaseURLsPasswordIsUsedButNotStored() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let server = try LocalChatServer(
            replies: (1...20).map { EvalCommandTests.completion("Paris", id: $0) })
        defer { server.stop() }
        try #"{"id": "q1", "input": "Capital of France?", "target": "Paris"}"#.write(
            toFile: directory + "/qa.jsonl", atomically: true, encoding: .utf8)
        let passwords = Self.table.compactMap(\.password).filter { !$0.isEmpty }
        var shown = ""
        for (index, password) in passwords.enumerated() {
            let base = "http://bob:\(password)@127.0.0.1:\(server.port)/v1"
            let suite = directory + "/s\(index).yaml"
            try """
            name: s\(index)
            dataset: qa.jsonl
            target:
              model: {provider: openai, base_url: "\(base)", model: gpt-4o-mini, stream: false}
            scorers: [exact]
            """.write(toFile: suite, atomically: true, encoding: .utf8)
            let run = try TestEnvironment.run(["--workspace", file, "eval", "run", suite])
            shown += run.output + run.error
            let queued = try TestEnvironment.run(["--workspace", file, "eval", "run", suite, "--workers"])
            #expect(queued.status != 0 && queued.error.contains("base_url"), "\(queued.output)\(queued.error)")
            shown += queued.output + queued.error
        }
        // The URLs that parse (a %-escape, a plain password) were asked, with their credentials.
        #expect(server.requests.count >= 2, "\(shown)")
        #expect(server.requests.allSatisfy { $0.headers["authorization"]?.hasPrefix("Basic ") == true })
        let queue = try DatabaseQueue(path: file)
        let dump = try queue.read { db in
            var text = ""
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") { text += "\(row)\n" }
            }
            return text
        }
        #expect(dump.contains("127.0.0.1:\(server.port)"), "the run keeps its target")
        for hostile in Self.table {
            Self.expectHidden(dump, hostile, "the workspace")
            Self.expectHidden(shown, hostile, "eval run's output")
        }
    }
}
