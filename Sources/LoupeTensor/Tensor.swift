/// A row-major Float32 tensor: a shape and a flat storage of `shape.reduce(1, *)` values.
///
/// Value semantics (copy on write through `Array`); kernels work on its buffer in place.
package struct Tensor: Hashable, Sendable {
    package private(set) var shape: [Int]
    package var storage: [Float]

    package init(shape: [Int], storage: [Float]) {
        precondition(shape.allSatisfy { $0 >= 0 }, "negative dimension in \(shape)")
        precondition(
            shape.reduce(1, *) == storage.count,
            "shape \(shape) needs \(shape.reduce(1, *)) values, got \(storage.count)")
        self.shape = shape
        self.storage = storage
    }

    /// A tensor of zeros.
    package init(zeros shape: [Int]) {
        self.init(shape: shape, storage: Array(repeating: 0, count: shape.reduce(1, *)))
    }

    package var count: Int { storage.count }
    /// The last dimension (the length of a row).
    package var columns: Int { shape.last ?? 1 }
    /// The number of rows: every dimension but the last, multiplied.
    package var rows: Int { columns == 0 ? 0 : count / columns }

    /// Row `index` of the tensor viewed as `rows × columns`.
    package func row(_ index: Int) -> ArraySlice<Float> {
        storage[(index * columns)..<((index + 1) * columns)]
    }

    /// The same values under another shape with the same number of elements.
    package func reshaped(_ newShape: [Int]) -> Tensor {
        Tensor(shape: newShape, storage: storage)
    }
}
