import Foundation

/// How Loupe runs Arize Phoenix's server (`phoenix serve`) as a peer — `bench receive`'s and the
/// send-on test's: on loopback only, on the ports given, in a working directory of its own (its
/// SQLite lives there), with its usage telemetry off.
package enum PhoenixServer {
    package static func environment(
        directory: String, port: Int, grpcPort: Int,
        inheriting base: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: String] {
        var environment = base
        environment["PHOENIX_WORKING_DIR"] = directory
        environment["PHOENIX_HOST"] = "127.0.0.1"
        environment["PHOENIX_PORT"] = String(port)
        environment["PHOENIX_GRPC_PORT"] = String(grpcPort)
        environment["PHOENIX_TELEMETRY_ENABLED"] = "false"
        return environment
    }
}
