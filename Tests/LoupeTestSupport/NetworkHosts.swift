import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Machines of their own for a test, on this one: each host is a network namespace (`ip netns`)
/// joined to this one by a veth pair, with an address of its own (10.231.N.2) and a default
/// route to this namespace's end of the pair (10.231.N.1). A process run on a host (``command``)
/// sees only its namespace's loopback and its link: it reaches a server here only at a gateway
/// address, as another machine reaches a database host, and the server sees it connect from the
/// host's address. Every address and name is made by the test and removed by ``remove()``.
///
/// Needs root (CAP_NET_ADMIN) and iproute2, as CI has.
package final class NetworkHosts: Sendable {
    package struct Host: Sendable {
        /// The namespace's name.
        package var namespace: String
        /// The host's address, as a server here sees it.
        package var address: String
        /// This namespace's end of the host's link: where the host reaches this machine.
        package var gateway: String
    }

    package let hosts: [Host]

    /// Makes `count` hosts with names and subnets unlikely to meet another test process's.
    package init(count: Int) throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        var subnets = Set<Int>()
        while subnets.count < count { subnets.insert(Int.random(in: 1...254)) }
        var made: [Host] = []
        do {
            for (index, subnet) in subnets.sorted().enumerated() {
                let host = Host(
                    namespace: "loupe-\(tag)-\(index)", address: "10.231.\(subnet).2", gateway: "10.231.\(subnet).1")
                // Interface names are at most 15 bytes.
                let outside = "lp\(tag.prefix(8))\(index)o"
                let inside = "lp\(tag.prefix(8))\(index)i"
                try Self.ip(["netns", "add", host.namespace])
                made.append(host)
                try Self.ip(["link", "add", outside, "type", "veth", "peer", "name", inside])
                try Self.ip(["link", "set", inside, "netns", host.namespace])
                try Self.ip(["addr", "add", host.gateway + "/24", "dev", outside])
                try Self.ip(["link", "set", outside, "up"])
                let inNamespace = ["netns", "exec", host.namespace, "ip"]
                try Self.ip(inNamespace + ["addr", "add", host.address + "/24", "dev", inside])
                try Self.ip(inNamespace + ["link", "set", inside, "up"])
                try Self.ip(inNamespace + ["link", "set", "lo", "up"])
                try Self.ip(inNamespace + ["route", "add", "default", "via", host.gateway])
            }
        } catch {
            for host in made { try? Self.ip(["netns", "delete", host.namespace]) }
            throw error
        }
        hosts = made
    }

    /// Whether this machine lets the test make network namespaces (root, iproute2, and a kernel
    /// and container that allow them), found by making one and deleting it.
    package static let canMakeHosts: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = "loupe-probe-\(UInt32.random(in: 0...UInt32.max))"
        guard (try? ip(["netns", "add", probe])) != nil else { return false }
        try? ip(["netns", "delete", probe])
        return true
    }()

    /// `arguments` as a command run on `host`.
    package func command(on host: Host, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        ("/usr/sbin/ip", ["netns", "exec", host.namespace] + arguments)
    }

    /// Deletes the namespaces, and with them their ends of the links (the other ends go too).
    package func remove() {
        for host in hosts { try? Self.ip(["netns", "delete", host.namespace]) }
    }

    private static func ip(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ClusterError("ip \(arguments.joined(separator: " ")) failed: \(said)")
        }
    }
}
