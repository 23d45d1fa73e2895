import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket on a loopback port the kernel chose: a port that is free now (close it and hand
/// the number on), or, listening, one held busy for a test of what a server does on a busy port.
package final class LoopbackSocket {
    package let port: Int
    private let descriptor: Int32

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 1) == 0)
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ready else {
            Glibc.close(descriptor)
            throw Failure(description: "bind, listen or getsockname on 127.0.0.1 failed")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(descriptor) }
}
