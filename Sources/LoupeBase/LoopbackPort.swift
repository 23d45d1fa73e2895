import Glibc

/// A loopback TCP port nothing listens on now: bound to port 0, read and closed, for a child
/// server (Phoenix) that must be told its port. Another process may take it in between; the
/// callers are a bench and tests, which start their server at once. And a raw connection to a
/// loopback port, for the clients no HTTP library imitates (an upload a byte a second).
package enum LoopbackPort {
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String { "no free loopback port" }
    }

    package static func free() throws(Unavailable) -> Int { try free(count: 1)[0] }

    /// `count` different ports: every probe socket stays bound until all are found.
    package static func free(count: Int) throws(Unavailable) -> [Int] {
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw Unavailable() }
            sockets.append(socket)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
                }
            }
            guard bound else { throw Unavailable() }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// A TCP socket connected to 127.0.0.1:`port` (the caller closes it), or nil.
    package static func connect(_ port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socket)
            return nil
        }
        return socket
    }
}
