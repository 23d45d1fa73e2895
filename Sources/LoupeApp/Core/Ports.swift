/// The panels' ports, by type: the composition root registers one of each
/// (``TracesBrowser``, ``RetrievalBrowser`` …) and the runtime hands each ``PortRequest`` the
/// one its `Port` names.
package struct Ports: Sendable {
    private var byType: [ObjectIdentifier: any Sendable] = [:]
    /// Why a port that is not registered is missing, said in the panel that asks it (a
    /// PostgreSQL workspace has no Roofline yet); nil for the plain "not available here".
    package var whyMissing: String?

    package init() {}

    /// Makes `port` the one every request for a `Port` is asked of.
    package mutating func register<Port: Sendable>(_ port: Port) { byType[ObjectIdentifier(Port.self)] = port }

    /// The registered port of that type, nil when there is none (no workspace, no model).
    package subscript<Port: Sendable>(_ type: Port.Type) -> Port? { byType[ObjectIdentifier(type)] as? Port }
}
