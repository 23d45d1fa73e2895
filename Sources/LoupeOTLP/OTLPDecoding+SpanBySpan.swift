import Foundation
import LoupeAgents
import SwiftProtobuf

/// A protobuf request that swift-protobuf refuses as a whole, read again one span at a time.
///
/// proto3 makes a string that is not UTF-8, or messages nested past the depth limit, an error of
/// the whole message: one exporter's bad span would lose every span sent beside it. OTLP asks a
/// receiver to keep what it can and name the rest in the partial success. So the request's
/// structure (`resource_spans` → `scope_spans` → `spans`) is walked at the wire level and each
/// span, resource and scope decoded on its own: a span that does not decode is rejected by its
/// path; the spans under a resource or scope that does not decode are rejected naming it.
///
/// When the structure itself is broken (a length past the end, a field of the wrong wire type),
/// or every part decodes (so the fault is not one a span can carry), the request stays malformed.
extension OTLPDecoding {
    /// The request in `bytes` read span by span; nil when no span, resource or scope is at fault.
    static func spanBySpan(_ bytes: UnsafeRawBufferPointer) -> Decoded? {
        var located: [LocatedSpan] = []
        var rejected: [TraceImportError] = []
        do throws(WireReader.Broken) {
            var request = WireReader(bytes)
            var r = 0
            while let field = try request.next() {
                guard field.number == 1 else { continue }
                guard let resourceSpans = field.bytes else { throw WireReader.Broken() }
                try read(
                    resourceSpans: resourceSpans, at: r, into: &located, rejecting: &rejected)
                r += 1
            }
        } catch {
            return nil
        }
        guard !rejected.isEmpty else { return nil }
        return read(located, rejected: rejected)
    }

    /// One `ResourceSpans`: its spans located, or rejected when they or their resource or scope
    /// do not decode.
    private static func read(
        resourceSpans bytes: UnsafeRawBufferPointer, at r: Int, into located: inout [LocatedSpan],
        rejecting rejected: inout [TraceImportError]
    ) throws(WireReader.Broken) {
        var fields = WireReader(bytes)
        var resource = Opentelemetry_Proto_Resource_V1_Resource()
        var resourceFault: String?
        var scopes: [UnsafeRawBufferPointer] = []
        while let field = try fields.next() {
            switch field.number {
            case 1:
                guard let value = field.bytes else { throw WireReader.Broken() }
                // A message field given twice is merged, as protobuf does.
                do { try resource.merge(serializedBytes: data(value), options: options(depth: 2)) } catch {
                    resourceFault = resourceFault ?? "resourceSpans[\(r)].resource \(reason(error))"
                }
            case 2:
                guard let value = field.bytes else { throw WireReader.Broken() }
                scopes.append(value)
            case 3:
                guard let value = field.bytes else { throw WireReader.Broken() }
                if !isUTF8(value) {
                    resourceFault = resourceFault ?? "resourceSpans[\(r)].schemaUrl is not valid UTF-8"
                }
            default: continue
            }
        }
        let service = resourceFault == nil ? serviceName(resource) : nil
        for (s, scopeBytes) in scopes.enumerated() {
            var scopeFields = WireReader(scopeBytes)
            var scopeFault = resourceFault
            var spans: [UnsafeRawBufferPointer] = []
            while let field = try scopeFields.next() {
                switch field.number {
                case 1:
                    guard let value = field.bytes else { throw WireReader.Broken() }
                    do {
                        _ = try Opentelemetry_Proto_Common_V1_InstrumentationScope(
                            serializedBytes: data(value), options: options(depth: 3))
                    } catch {
                        scopeFault = scopeFault ?? "resourceSpans[\(r)].scopeSpans[\(s)].scope \(reason(error))"
                    }
                case 2:
                    guard let value = field.bytes else { throw WireReader.Broken() }
                    spans.append(value)
                case 3:
                    guard let value = field.bytes else { throw WireReader.Broken() }
                    if !isUTF8(value) {
                        scopeFault = scopeFault ?? "resourceSpans[\(r)].scopeSpans[\(s)].schemaUrl is not valid UTF-8"
                    }
                default: continue
                }
            }
            for (i, spanBytes) in spans.enumerated() {
                let path = "resourceSpans[\(r)].scopeSpans[\(s)].spans[\(i)]"
                if let scopeFault {
                    rejected.append(TraceImportError(file: "request", field: path, "not read: \(scopeFault)"))
                    continue
                }
                do {
                    let span = try Opentelemetry_Proto_Trace_V1_Span(
                        serializedBytes: data(spanBytes), options: options(depth: 3))
                    located.append((span, service, (r, s, i)))
                } catch {
                    rejected.append(
                        TraceImportError(file: "request", field: path, "is not a valid Span: \(reason(error))"))
                }
            }
        }
    }

    /// The bytes as `Data` without copying them; valid while they are.
    private static func data(_ bytes: UnsafeRawBufferPointer) -> Data {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return Data() }
        return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
    }

    /// The whole request's depth limit, less the `depth` levels above a part decoded on its own.
    private static func options(depth: Int) -> BinaryDecodingOptions {
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = recursionLimit - depth
        return options
    }

    /// Why protobuf refused a part, in words.
    private static func reason(_ error: any Error) -> String {
        switch error as? BinaryDecodingError {
        case .invalidUTF8?: "has a string that is not valid UTF-8"
        case .messageDepthLimit?: "nests messages deeper than \(recursionLimit) levels"
        default: "is not valid protobuf (\(error))"
        }
    }

    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }
}

/// Protobuf's wire format, field by field: enough to walk a message's structure without decoding it.
private struct WireReader {
    /// A length past the end, a varint longer than ten bytes, a field numbered 0, a group.
    struct Broken: Error {}

    /// A field: its number, and its bytes when it is length-delimited.
    struct Field {
        var number: UInt64
        var bytes: UnsafeRawBufferPointer?
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The next field; nil at the end.
    mutating func next() throws(Broken) -> Field? {
        guard offset < bytes.count else { return nil }
        let key = try varint()
        let number = key >> 3
        guard number != 0 else { throw Broken() }
        switch key & 7 {
        case 0:
            _ = try varint()
            return Field(number: number, bytes: nil)
        case 1: try skip(8)
        case 5: try skip(4)
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw Broken() }
            let value = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
            offset += Int(length)
            return Field(number: number, bytes: value)
        default: throw Broken()
        }
        return Field(number: number, bytes: nil)
    }

    private mutating func skip(_ count: Int) throws(Broken) {
        guard bytes.count - offset >= count else { throw Broken() }
        offset += count
    }

    private mutating func varint() throws(Broken) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw Broken()
    }
}
