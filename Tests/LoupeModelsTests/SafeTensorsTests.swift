import Foundation
import LoupeBase
import LoupeModels
import LoupeTensor
import Testing

@Suite struct SafeTensorsTests {
    let directory: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-st-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Writes a safetensors file from a header object and raw data bytes.
    private func write(_ header: String, data: [UInt8], name: String = "t.safetensors", headerLength: UInt64? = nil)
        -> String
    {
        var bytes: [UInt8] = []
        let length = headerLength ?? UInt64(header.utf8.count)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(length >> UInt64(shift) & 0xFF)) }
        bytes += Array(header.utf8) + data
        let path = directory + "/" + name
        precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
        return path
    }

    private func float32(_ values: [Float]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) }
    }

    @Test func readsF32F16AndBF16() throws {
        let f16: [UInt8] = [0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00]  // 1.0, -2.0, smallest subnormal
        let bf16: [UInt8] = [0x80, 0x3F, 0x40, 0xC0]  // 1.0, -3.0
        let header =
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"h":{"dtype":"F16","shape":[3],"data_offsets":[8,14]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[14,18]},"__metadata__":{"format":"pt"}}"#
        let file = try SafeTensors(path: write(header, data: float32([1.5, -0.25]) + f16 + bf16))
        #expect(try file.tensor("a").storage == [1.5, -0.25])
        #expect(try file.tensor("h").storage == [1.0, -2.0, Float(5.9604645e-08)])
        #expect(try file.tensor("b").storage == [1.0, -3.0])
        #expect(try file.tensor("a", shape: [2]).shape == [2])
    }

    @Test(arguments: [
        (#"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#, 8, "truncated?"),
        (#"{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#, 8, "F32 [3] needs 12 bytes, the header gives 8"),
        (#"{"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}"#, 8, "dtype Q4 is not supported"),
        (
            #"{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}"#, 8,
            "shape is not a list of non-negative integers"
        ),
        (
            #"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
            8, "overlap"
        ),
        (#"{"w": [1, 2"#, 8, "header is not a JSON object"),
        // The element count overflowed Int and trapped (issue 19).
        (
            #"{"w":{"dtype":"F32","shape":[2147483648,2147483648],"data_offsets":[0,8]}}"#, 8,
            "shape × F32 size: 4611686018427387904 × 4 overflows a 64-bit size"
        ),
        (
            #"{"w":{"dtype":"I64","shape":[1073741824,1073741824,8],"data_offsets":[0,8]}}"#, 8,
            "overflows a 64-bit size"
        ),
        (#"{"w":{"dtype":"F32","shape":[2, 1e300],"data_offsets":[0,8]}}"#, 8, "not a list of non-negative integers"),
        (#"{"w":{"dtype":"F32","shape":[-1, -4],"data_offsets":[0,16]}}"#, 16, "not a list of non-negative integers"),
        (#"{"w":{"dtype":5,"shape":[2],"data_offsets":[0,8]}}"#, 8, "dtype 5 is not a string"),
    ])
    func malformedHeadersNameTheFileAndTensor(header: String, bytes: Int, message: String) {
        let path = write(header, data: Array(repeating: 0, count: bytes))
        let error = #expect(throws: ModelError.self) { try SafeTensors(path: path) }
        #expect(error?.location == LoupeBase.SourceLocation(file: "t.safetensors"))
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
    }

    @Test func truncatedFilesAndMissingTensorsAreClear() throws {
        let tooLong = write("{}", data: [], headerLength: 9999)
        #expect(
            (#expect(throws: ModelError.self) { try SafeTensors(path: tooLong) })?.message.contains("runs past the end")
                == true)
        let empty = directory + "/empty.safetensors"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data([1, 2])))
        #expect(throws: ModelError.self) { try SafeTensors(path: empty) }
        #expect(throws: ModelError.self) { try SafeTensors(path: directory + "/missing.safetensors") }
        let file = try SafeTensors(
            path: write(#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#, data: float32([1, 2])))
        let missing = #expect(throws: ModelError.self) {
            try file.tensor("encoder.layer.0.attention.self.query.weight")
        }
        #expect(missing?.tensor == "encoder.layer.0.attention.self.query.weight")
        let wrongShape = #expect(throws: ModelError.self) { try file.tensor("w", shape: [384]) }
        #expect(wrongShape?.description == "t.safetensors: tensor 'w': has shape [2], expected [384]")
    }
}
