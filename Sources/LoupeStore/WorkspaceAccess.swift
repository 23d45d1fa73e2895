/// What a command needs from a workspace: to read it only, or to write it too.
///
/// A reader opens read-only connections and never takes the write lock, so it is not refused
/// while another process writes, and it works on a read-only or full file system. It becomes a
/// writer on its first write.
package enum WorkspaceAccess: Hashable, Sendable {
    /// Read-only connections; the writer (and any pending migration) waits for the first write.
    case read
    /// The writer is opened at once, so a file that cannot be written is reported before any work.
    case write
}
