/// One tensor's entry in a GGUF file, checked against the file when it was opened.
package struct GGUFTensorInfo: Sendable, Hashable {
    package let name: String
    /// ne0 first: `dimensions[0]` is the contiguous row length, a multiple of the type's block size.
    package let dimensions: [Int]
    package let type: GGMLType
    /// The absolute byte offset of the data in the file (the data section's start plus the
    /// tensor's aligned offset).
    package let offset: Int
    /// Bytes of data: elements / block size × bytes per block.
    package let byteCount: Int
    /// The product of the dimensions, checked not to overflow.
    package var elementCount: Int

    package init(name: String, dimensions: [Int], type: GGMLType, offset: Int, byteCount: Int, elementCount: Int) {
        self.name = name
        self.dimensions = dimensions
        self.type = type
        self.offset = offset
        self.byteCount = byteCount
        self.elementCount = elementCount
    }

    /// Rows of `dimensions[0]` elements: `dimensions[1]` for a matrix, 1 for a vector.
    package var rows: Int { elementCount / dimensions[0] }

    /// Bytes of one row: `dimensions[0]` / block size × bytes per block.
    package var bytesPerRow: Int { dimensions[0] / type.blockSize * type.bytesPerBlock }
}
