extension QuantizedMatrix {
    /// The GGUF tensor `tensor` of `file` (Q4_1 or Q8_0, `[ne0 = columns, ne1 = rows]`), repacked.
    ///
    /// - Throws: `ModelError` naming the file and tensor when its type is neither, it is not a
    ///   matrix, or its rows are not in blocks of 32.
    package convenience init(tensor: GGUFTensorInfo, file: GGUFFile) throws(ModelError) {
        let type: WeightType
        switch tensor.type {
        case .q4_1: type = .q4_1
        case .q8_0: type = .q8_0
        default:
            throw ModelError(
                file: file.fileName, tensor: tensor.name,
                message: "is \(tensor.type.name); the quantized products read Q4_1 and Q8_0")
        }
        guard tensor.dimensions.count == 2 else {
            throw ModelError(
                file: file.fileName, tensor: tensor.name,
                message: "has dimensions \(tensor.dimensions); a matrix has two")
        }
        try self.init(
            type: type, rows: tensor.dimensions[1], columns: tensor.dimensions[0], raw: file.bytes(tensor),
            name: tensor.name, file: file.fileName)
    }

    /// The tensor called `name` in `file`, repacked (see `init(tensor:file:)`).
    package convenience init(_ name: String, in file: GGUFFile) throws(ModelError) {
        try self.init(tensor: file.tensor(name), file: file)
    }
}
