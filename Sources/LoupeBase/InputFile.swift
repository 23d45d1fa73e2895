import Glibc
import Synchronization

/// How a user's input file is opened, and how much of it Loupe reads: every reader of a file a
/// user names (a trace, a dataset, review labels, qrels, a profile) opens it here.
///
/// The bound: an input is read up to ``limitBytes`` (1 GiB unless `--max-input-mb` or
/// `LOUPE_MAX_INPUT_MB` says otherwise). A regular file over it is refused from its size before a
/// byte is read; standard input is read up to it and refused past it.
///
/// What is opened: regular files, and standard input named `-`, `/dev/stdin`, `/dev/fd/0` or
/// `/proc/self/fd/0`. Named pipes (FIFOs), character and block devices and sockets are refused
/// by name: a FIFO with no writer would make the reader wait forever and `/dev/zero` never ends.
/// The path is opened non-blocking, so even opening a FIFO does not wait.
package enum InputFile {
    /// The environment variable that sets the input limit, in megabytes (MiB).
    package static let limitVariable = "LOUPE_MAX_INPUT_MB"
    /// The input limit when neither the flag nor the environment sets one: 1 GiB.
    package static let defaultLimitBytes = 1 << 30

    /// The limit set by `--max-input-mb` for this process, 0 when none was given.
    private static let flagLimitBytes = Atomic<Int>(0)

    /// The largest input Loupe reads, in bytes: `--max-input-mb`, else `LOUPE_MAX_INPUT_MB`, else
    /// 1 GiB. An environment value that is not a positive whole number is ignored.
    package static var limitBytes: Int {
        let flag = flagLimitBytes.load(ordering: .relaxed)
        if flag > 0 { return flag }
        return limitBytes(environment: getenv(limitVariable).map { String(cString: $0) })
    }

    /// The limit `LOUPE_MAX_INPUT_MB` set to `text` gives (nil: unset).
    static func limitBytes(environment text: String?) -> Int {
        guard let text, let megabytes = Int(text), megabytes > 0 else { return defaultLimitBytes }
        let bytes = megabytes.multipliedReportingOverflow(by: 1 << 20)
        return bytes.overflow ? Int.max : bytes.partialValue
    }

    /// Sets the input limit for the rest of the process (`--max-input-mb`).
    package static func setLimit(megabytes: Int) {
        precondition(megabytes > 0, "an input limit is a positive number of megabytes")
        let bytes = megabytes.multipliedReportingOverflow(by: 1 << 20)
        flagLimitBytes.store(bytes.overflow ? Int.max : bytes.partialValue, ordering: .relaxed)
    }

    /// Whether `path` names this process's standard input.
    package static func isStandardInput(_ path: String) -> Bool {
        ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].contains(path)
    }

    /// An open, blocking descriptor of `path` (the caller closes it) and its size in bytes (0 for
    /// a pipe on standard input, whose size is unknown). Throws `FileReadError` saying what the
    /// path is when it is not a regular file or standard input, or cannot be opened.
    package static func open(_ path: String) throws(FileReadError) -> (fd: Int32, size: Int) {
        let fd: Int32
        if isStandardInput(path) {
            fd = dup(0)
            guard fd >= 0 else { throw FileReadError(path: path, reason: .system("standard input is closed")) }
        } else {
            fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw FileReadError(path: path, errno: errno) }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw FileReadError(path: path, errno: code)
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            close(fd)
            throw FileReadError(path: path, reason: .isDirectory)
        }
        if type == S_IFREG {
            // Opened non-blocking only so that a FIFO could not make `open` wait; reads block.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return (fd, Int(info.st_size))
        }
        if isStandardInput(path) { return (fd, 0) }
        close(fd)
        throw FileReadError(path: path, reason: .notRegularFile(kind: kindName(type)))
    }

    /// What a file of type `type` (`st_mode & S_IFMT`) is, for a message.
    private static func kindName(_ type: mode_t) -> String {
        switch type {
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}
