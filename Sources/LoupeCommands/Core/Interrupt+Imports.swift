import LoupeKit

#if canImport(Glibc)
    import Glibc
#endif

extension Interrupt {
    /// Runs an import (`trace import`, `profile import`, `ingest`) so that SIGINT and
    /// SIGTERM stop it even when the shell started it with SIGINT ignored (`loupe ... &` from a
    /// script): the import stops at its next check, or is abandoned a second later, and either
    /// way its transaction is not committed. The command then exits 130 or 143 saying what was
    /// kept.
    ///
    /// - Parameter what: what was being imported ("traces"), for the message.
    /// - Parameter kept: what a stopped import leaves stored, for the message: nothing, for an
    ///   import in one transaction.
    static func importing<T>(
        _ context: CommandContext, _ what: String, kept: String = "nothing was imported", _ body: () throws -> T
    ) throws -> T {
        do {
            return try cancellable(context, work: "\(what) were being imported", advice: kept, body)
        } catch is JobCancelled {
            let number = lastSignal ?? SIGINT
            throw CommandExit(
                code: 128 + number,
                "stopped by \(number == SIGTERM ? "SIGTERM" : "SIGINT") while \(what) were being imported; \(kept)")
        }
    }
}
