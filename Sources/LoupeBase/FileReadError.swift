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
        case notUTF8(byteOffset: Int)
        case system(String)
    }

    package var path: String
    package var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The error for `errno` value `code` from `open`/`read` on `path`.
    package init(path: String, errno code: Int32) {
        self.path = path
        switch code {
        case ENOENT, ENOTDIR: reason = .noSuchFile
        case EISDIR: reason = .isDirectory
        case EACCES, EPERM: reason = .permissionDenied
        default: reason = .system(String(cString: strerror(code)))
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
        case .notUTF8(let offset): "not UTF-8 text (invalid byte at offset \(offset))"
        case .system(let message): "cannot be read (\(message))"
        }
    }

    private static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes) bytes"
    }
}
