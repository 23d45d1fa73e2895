import Glibc

/// Why a user's file could not be read, with its path: missing, a directory, not permitted,
/// over the reader's size limit, or not UTF-8 text (with the byte offset of the first bad byte).
package struct FileReadError: UserFacingError, Hashable, Sendable {
    /// What went wrong; `errno` codes that have no case of their own keep the system's message.
    package enum Reason: Hashable, Sendable {
        case noSuchFile
        case isDirectory
        case permissionDenied
        case tooLarge(bytes: Int, limitBytes: Int)
        /// Over the input limit (`InputFile.limitBytes`); `streamed` when the size is what was
        /// read before stopping (standard input), not the file's size.
        case overInputLimit(bytes: Int, limitBytes: Int, streamed: Bool)
        /// A FIFO, device or socket ("a named pipe (FIFO)").
        case notRegularFile(kind: String)
        case symlinkLoop
        /// A symbolic link to a path that does not exist.
        case danglingSymlink(target: String)
        /// The name given was not UTF-8, and so reached Loupe changed (with U+FFFD).
        case nameNotUTF8
        case notUTF8(byteOffset: Int)
        case system(String)
    }

    package var path: String
    package var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The error for `errno` value `code` from `open`/`stat`/`read` on `path`, saying more than
    /// "no such file" where it can: a symbolic link to nothing, a name that was not UTF-8.
    package init(path: String, errno code: Int32) {
        self.path = path
        switch code {
        case ENOENT, ENOTDIR: reason = .noSuchFile
        case ELOOP: reason = .symlinkLoop
        case EISDIR: reason = .isDirectory
        case EACCES, EPERM: reason = .permissionDenied
        default: reason = .system(String(cString: strerror(code)))
        }
        guard code == ENOENT else { return }
        if path.unicodeScalars.contains("\u{FFFD}") {
            reason = .nameNotUTF8
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        if count > 0 {
            reason = .danglingSymlink(
                target: String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    package var description: String { "\(path): \(reasonDescription)" }

    /// What is wrong and what to do, without the path, for errors that name the file themselves.
    package var reasonDescription: String {
        switch reason {
        case .noSuchFile: "no such file (check the path)"
        case .isDirectory: "is a directory, not a file (give the path of a file in it)"
        case .permissionDenied: "permission denied (check the file's permissions)"
        case .tooLarge(let bytes, let limit):
            "the file is \(Self.megabytes(bytes)), the limit for this kind of file is \(Self.megabytes(limit))"
        case .overInputLimit(let bytes, let limit, let streamed):
            (streamed ? "more than \(Self.size(bytes)) came from it" : "it is \(Self.size(bytes))")
                + "; Loupe reads inputs up to \(Self.size(limit)) (raise it with --max-input-mb MB or "
                + "\(InputFile.limitVariable)=MB)"
        case .notRegularFile(let kind):
            "is \(kind), not a regular file; Loupe reads files, and standard input given as - "
                + "(save the data to a file, or run loupe ... - < source)"
        case .symlinkLoop: "is a symbolic link loop (too many levels of symbolic links)"
        case .danglingSymlink(let target): "is a symbolic link to \(target), which does not exist"
        case .nameNotUTF8:
            "no such file: the name given is not valid UTF-8, so it cannot be opened by that name "
                + "(rename the file, or give a name without those bytes)"
        case .notUTF8(let offset): "not UTF-8 text (invalid byte at offset \(offset))"
        case .system(let message): "cannot be read (\(message))"
        }
    }

    /// `bytes` as people read a file's size: "3.1 GB", "12 MB", "512 bytes".
    private static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 30 {
            let tenths = Int((Double(bytes) / Double(1 << 30) * 10).rounded(.down))
            return tenths % 10 == 0 ? "\(tenths / 10) GB" : "\(tenths / 10).\(tenths % 10) GB"
        }
        return megabytes(bytes)
    }

    private static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes) bytes"
    }
}
