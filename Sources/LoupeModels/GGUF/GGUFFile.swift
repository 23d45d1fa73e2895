import Foundation
import LoupeBase

/// A GGUF file (llama.cpp's model container), memory-mapped read-only.
///
/// Layout (GGUF v2 and v3, little-endian): magic `GGUF`, u32 version, u64 tensor count, u64
/// metadata count, the metadata key/value pairs, the tensor infos, padding to `general.alignment`
/// (32 when absent), then the tensor data. Every count, length, dimension and offset is checked
/// against the file's size, with overflow-checked arithmetic, before it is used: a bad file is a
/// ``ModelError`` naming the file, the field and its byte offset, never a trap or an allocation
/// larger than the file. Tensors of types Loupe cannot dequantize are accepted when opening and
/// refused by name when their values are asked for (``validateSupported()``).
///
/// Thread-safety: `@unchecked Sendable` because every stored property is immutable after `init`
/// and the mapping is read-only (`PROT_READ`), so concurrent readers share it safely.
package final class GGUFFile: @unchecked Sendable {
    package let path: String
    /// 2 or 3.
    package let version: UInt32
    /// `general.alignment`, or 32 when the file has none; a power of two.
    package let alignment: Int
    /// Metadata keys in file order.
    package let keys: [String]
    package let metadata: [String: GGUFValue]
    /// Tensor infos in file order.
    package let tensors: [GGUFTensorInfo]
    /// The absolute byte offset where tensor data starts (a multiple of `alignment`).
    package let dataOffset: Int
    /// The file's size in bytes.
    package let fileSize: Int

    /// The file's last path component, as model errors name files.
    package var fileName: String { (path as NSString).lastPathComponent }

    private let mapping: UnsafeRawBufferPointer
    private let tensorIndex: [String: Int]

    /// The alignment when the file does not set `general.alignment`.
    package static let defaultAlignment = 32
    /// ggml's `GGML_MAX_DIMS`.
    package static let maximumDimensions = 4

    /// Maps `path` and reads its header, metadata and tensor infos.
    ///
    /// - Throws: ``ModelError`` for a file that cannot be opened or mapped, or is not a valid GGUF
    ///   v2/v3 file: the message names the field and its byte offset.
    package init(path: String) throws(ModelError) {
        self.path = path
        let name = (path as NSString).lastPathComponent
        let (fd, size): (Int32, Int)
        do { (fd, size) = try InputFile.open(path) } catch { throw ModelError(reading: error) }
        defer { close(fd) }
        fileSize = size
        if size > 0 {
            guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
                throw ModelError(
                    file: name, message: "cannot be mapped into memory (\(String(cString: strerror(errno))))")
            }
            mapping = UnsafeRawBufferPointer(start: base, count: size)
        } else {
            // mmap refuses length 0; an empty buffer makes the parser report the missing magic.
            mapping = UnsafeRawBufferPointer(start: nil, count: 0)
        }
        do {
            let header = try GGUFHeader(bytes: mapping, file: name)
            version = header.version
            alignment = header.alignment
            keys = header.keys
            metadata = header.metadata
            tensors = header.tensors
            dataOffset = header.dataOffset
            tensorIndex = Dictionary(uniqueKeysWithValues: header.tensors.enumerated().map { ($1.name, $0) })
        } catch {
            if let base = mapping.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), mapping.count) }
            throw error
        }
    }

    deinit {
        if let base = mapping.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), mapping.count) }
    }

    /// Drops the mapping's resident pages (`MADV_DONTNEED`) once a reader has copied what it needs:
    /// a model that repacks every tensor otherwise keeps the file resident beside its copies, and
    /// those file pages count in the process's RSS. Safe at any time: the mapping is private and
    /// never written, so a later read of ``bytes(_:)`` faults the pages in again from the file.
    package func releaseResidentPages() {
        guard let base = mapping.baseAddress else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), mapping.count, MADV_DONTNEED)
    }

    /// ``releaseResidentPages()`` for the pages `tensor`'s bytes lie on (rounded out to whole
    /// pages): a loader that copies tensor by tensor calls it after each, so the file and its
    /// copies are never resident together and the peak RSS is that of the copies alone. A page
    /// shared with a neighbour that is still to be read faults in again when it is.
    package func releaseResidentPages(of tensor: GGUFTensorInfo) {
        guard let base = mapping.baseAddress, tensor.byteCount > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = UInt(bitPattern: base) + UInt(tensor.offset)
        let first = start / UInt(page) * UInt(page)
        let end = min(start + UInt(tensor.byteCount), UInt(bitPattern: base) + UInt(mapping.count))
        let last = (end + UInt(page) - 1) / UInt(page) * UInt(page)
        _ = madvise(UnsafeMutableRawPointer(bitPattern: first), Int(last - first), MADV_DONTNEED)
    }

    /// The tensor called `name`; the error names it when the file has none.
    package func tensor(_ name: String) throws(ModelError) -> GGUFTensorInfo {
        guard let index = tensorIndex[name] else {
            throw ModelError(file: fileName, tensor: GGUFCursor.visible(name), message: "is missing")
        }
        return tensors[index]
    }

    /// The tensor's raw bytes, valid while this `GGUFFile` lives.
    ///
    /// `tensor` must be one of this file's ``tensors``.
    package func bytes(_ tensor: GGUFTensorInfo) -> UnsafeRawBufferPointer {
        precondition(
            tensor.offset >= 0 && tensor.byteCount >= 0 && tensor.offset <= mapping.count - tensor.byteCount,
            "tensor \(tensor.name) lies outside \(fileName)")
        return UnsafeRawBufferPointer(rebasing: mapping[tensor.offset..<(tensor.offset + tensor.byteCount)])
    }

    /// Throws when `tensor`'s type is one Loupe does not dequantize, naming the tensor and type.
    package func validateSupported(_ tensor: GGUFTensorInfo) throws(ModelError) {
        guard tensor.type.isSupported else {
            throw ModelError(
                file: fileName, tensor: GGUFCursor.visible(tensor.name),
                message: "is \(tensor.type.name), which Loupe does not read yet (it reads \(GGMLType.supportedNames))")
        }
    }

    /// Throws for the first tensor (in file order) whose type Loupe does not dequantize.
    package func validateSupported() throws(ModelError) {
        for tensor in tensors { try validateSupported(tensor) }
    }
}
