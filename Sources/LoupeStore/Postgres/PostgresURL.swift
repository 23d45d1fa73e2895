import Foundation
import LoupeBase

/// Where a team's workspace lives: a PostgreSQL database named by a `postgres://` URL, as libpq
/// reads one (`postgres://user:password@host:port/database?sslmode=require`).
///
/// The password is found as libpq finds it, in this order: the URL, `PGPASSWORD`, then the
/// password file (`PGPASSFILE`, else `~/.pgpass`; ignored, as libpq does, when others may read
/// it). It is held here only to connect: ``description`` and ``redacted`` never show it, so the
/// URL can be printed, kept in the history or shown in the status bar.
package struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted (libpq's `sslmode`, the modes that need no certificates
    /// of the client's own).
    package enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Never TLS.
        case disable
        /// TLS when the server offers it (libpq's default).
        case prefer
        /// TLS or no connection, without checking the server's certificate (libpq's `require`).
        case require
        /// TLS, and the server's certificate must chain to a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    package var user: String
    package var database: String
    package var sslMode: SSLMode
    /// The password, from wherever it was found; nil when the server asks for none.
    package var password: String?

    /// Whether `text` names a PostgreSQL workspace rather than a file.
    package static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `text`, filling what it leaves out as libpq does (`PGHOST`, `PGPORT`, `PGUSER`,
    /// `PGDATABASE`, `PGSSLMODE`, then localhost, 5432, the login name, the user's name).
    ///
    /// - Throws: ``WorkspaceError`` with code `notAWorkspace` naming what is wrong (the URL shown
    ///   without its password).
    package init(
        _ text: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        home: String = NSHomeDirectory()
    ) throws(WorkspaceError) {
        let shown = Self.redact(text)
        func refuse(_ why: String) -> WorkspaceError { WorkspaceError(.notAWorkspace, path: shown, message: why) }
        // The userinfo is taken off before URLComponents sees the rest: a password may hold `#`,
        // `/`, `?` or `@`, which URLComponents would read as the URL's structure.
        if Self.isURL(text), URLCredentials.cutPassword(in: text[...]) != nil {
            throw refuse(
                "is not a PostgreSQL URL: what follows the user's `:` is no port, and no `@host` follows it. If it "
                    + "is a password with a space, quote the whole URL or write the space as %20")
        }
        guard Self.isURL(text), let parts = URLCredentials.split(text[...]),
            let components = URLComponents(string: String(parts.scheme) + String(parts.rest))
        else { throw refuse("is not a PostgreSQL URL; write postgres://user@host:5432/database") }
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGHOST"] ?? "localhost"
        if host.hasPrefix("/") {
            throw refuse("names a Unix socket directory; give a host name or address (TCP is what Loupe speaks)")
        }
        if let port = components.port {
            self.port = port
        } else if let text = environment["PGPORT"] {
            guard let port = Int(text) else { throw refuse("PGPORT is \(text), not a port number") }
            self.port = port
        } else {
            port = 5432
        }
        guard (1...65535).contains(port) else { throw refuse("port \(port) is not between 1 and 65535") }
        var typedUser: String?
        var typedPassword: String?
        if let userinfo = parts.userinfo {
            guard let user = String(userinfo.user).removingPercentEncoding else {
                throw refuse("the user name has a %-escape that is not two hex digits (write % as %25)")
            }
            typedUser = user.isEmpty ? nil : user
            if let password = userinfo.password {
                guard let decoded = String(password).removingPercentEncoding else {
                    throw refuse("the password has a %-escape that is not two hex digits (write % as %25)")
                }
                typedPassword = decoded
            }
        }
        user = typedUser ?? environment["PGUSER"] ?? Self.loginName()
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if path.contains("/") { throw refuse("has a path of more than one part; the path is the database's name") }
        database = path.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGDATABASE"] ?? user
        var mode = environment["PGSSLMODE"] ?? SSLMode.prefer.rawValue
        var afterPassword = false
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode": mode = item.value ?? ""
            // libpq reads a password here too, and it wins over the userinfo's, as the later one.
            case "password":
                typedPassword = item.value ?? ""
                afterPassword = true
            case "application_name", "connect_timeout": continue
            default:
                // What follows a password's raw `&` may be the rest of it: not named.
                if afterPassword {
                    throw refuse(
                        "has a query part after password= that is no parameter Loupe knows; if the password holds "
                            + "& or =, write them as %26 and %3D")
                }
                throw refuse(
                    "has the parameter \(item.name), which Loupe does not use (it knows sslmode, password, "
                        + "application_name and connect_timeout)")
            }
        }
        guard let sslMode = SSLMode(rawValue: mode) else {
            throw refuse(
                "sslmode=\(mode) is not one Loupe knows: "
                    + SSLMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.sslMode = sslMode
        password =
            typedPassword
            ?? environment["PGPASSWORD"]
            ?? Self.passwordFromFile(
                environment["PGPASSFILE"] ?? home + "/.pgpass", host: host, port: port, database: database, user: user)
    }

    /// The URL without its password, with every part filled in.
    package var description: String {
        let mode = sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(Self.encode(user))@\(shownHost):\(port)/\(Self.encode(database))\(mode)"
    }

    /// `text` with any password in it replaced by `***`, for messages about a URL that may not
    /// even parse: the userinfo's password (up to the URL's last `@`, whatever it holds) and
    /// secret query parameters (`password`, `sslpassword`), as ``URLCredentials`` finds them.
    package static func redact(_ text: String) -> String {
        URLCredentials.redacted(text, placeholder: "***")
    }

    private static func encode(_ part: String) -> String {
        part.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@")))
            ?? part
    }

    private static func loginName() -> String {
        if let name = ProcessInfo.processInfo.environment["USER"], !name.isEmpty { return name }
        return NSUserName()
    }

    /// The password a libpq password file gives `host:port:database:user` (`*` matches anything,
    /// `\` escapes `:` and `\`); nil when there is no file, no line matches, or the file is
    /// readable by others (libpq ignores it then, and so does Loupe).
    static func passwordFromFile(_ path: String, host: String, port: Int, database: String, user: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 == 0,
            let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { return nil }
        let wanted = [host, String(port), database, user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = splitEscaped(String(line))
            guard fields.count == 5 else { continue }
            let matches = zip(fields.prefix(4), wanted).allSatisfy { field, value in
                field == "*" || field == value
            }
            if matches { return fields[4] }
        }
        return nil
    }

    private static func splitEscaped(_ line: String) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
