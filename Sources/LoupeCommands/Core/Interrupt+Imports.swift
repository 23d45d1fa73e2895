import LoupeKit

#if canImport(Glibc)
    import Glibc
#endif

extension Interrupt {
    /// Runs an import (`trace import`, `profile import`, `review import`) so that SIGINT and
    /// SIGTERM stop it even when the shell started it with SIGINT ignored (`loupe ... &` from a
    /// script): the import stops at its next check, or is abandoned a second later, and either
    /// way its one transaction is not committed. The command then exits 130 or 143 saying
    /// nothing was imported.
    ///
    /// - Parameter what: what was being imported ("traces"), for the message.
    static func importing<T>(_ context: CommandContext, _ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try cancellable(
                context, work: "\(what) were being imported", advice: "nothing was imported", body)
        } catch is JobCancelled {
            let number = lastSignal ?? SIGINT
            throw CommandExit(
                code: 128 + number,
                "stopped by \(number == SIGTERM ? "SIGTERM" : "SIGINT") while \(what) were being imported; "
                    + "nothing was imported")
        }
    }
}
