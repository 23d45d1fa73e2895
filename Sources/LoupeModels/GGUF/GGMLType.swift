/// ggml tensor types by their on-disk number (`enum ggml_type` in ggml.h).
///
/// Every type a GGUF file may hold is named, so that a tensor Loupe cannot dequantize is refused
/// by name ("is Q6_K, which Loupe does not read yet") and its byte size can still be checked
/// against the file. Numbers 4, 5 and 31–33, 36–38 were removed from ggml and are not types.
/// The cases keep ggml's own spelling (`q4_1`, `q6_K`), the names every quantization table uses.
// swift-format-ignore: AlwaysUseLowerCamelCase
package enum GGMLType: UInt32, Sendable, CaseIterable {
    case f32 = 0
    case f16 = 1
    case q4_0 = 2
    case q4_1 = 3
    case q5_0 = 6
    case q5_1 = 7
    case q8_0 = 8
    case q8_1 = 9
    case q2_K = 10
    case q3_K = 11
    case q4_K = 12
    case q5_K = 13
    case q6_K = 14
    case q8_K = 15
    case iq2_XXS = 16
    case iq2_XS = 17
    case iq3_XXS = 18
    case iq1_S = 19
    case iq4_NL = 20
    case iq3_S = 21
    case iq2_S = 22
    case iq4_XS = 23
    case i8 = 24
    case i16 = 25
    case i32 = 26
    case i64 = 27
    case f64 = 28
    case iq1_M = 29
    case bf16 = 30
    case tq1_0 = 34
    case tq2_0 = 35
    case mxfp4 = 39
}

extension GGMLType {
    /// The name ggml and llama.cpp print: `F32`, `Q4_1`, `Q6_K`, `IQ2_XXS`, `BF16`.
    package var name: String {
        switch self {
        case .f32: "F32"
        case .f16: "F16"
        case .q4_0: "Q4_0"
        case .q4_1: "Q4_1"
        case .q5_0: "Q5_0"
        case .q5_1: "Q5_1"
        case .q8_0: "Q8_0"
        case .q8_1: "Q8_1"
        case .q2_K: "Q2_K"
        case .q3_K: "Q3_K"
        case .q4_K: "Q4_K"
        case .q5_K: "Q5_K"
        case .q6_K: "Q6_K"
        case .q8_K: "Q8_K"
        case .iq2_XXS: "IQ2_XXS"
        case .iq2_XS: "IQ2_XS"
        case .iq3_XXS: "IQ3_XXS"
        case .iq1_S: "IQ1_S"
        case .iq4_NL: "IQ4_NL"
        case .iq3_S: "IQ3_S"
        case .iq2_S: "IQ2_S"
        case .iq4_XS: "IQ4_XS"
        case .i8: "I8"
        case .i16: "I16"
        case .i32: "I32"
        case .i64: "I64"
        case .f64: "F64"
        case .iq1_M: "IQ1_M"
        case .bf16: "BF16"
        case .tq1_0: "TQ1_0"
        case .tq2_0: "TQ2_0"
        case .mxfp4: "MXFP4"
        }
    }

    /// Elements per block: 1 for plain numbers, 32 for the legacy quants, 256 for K- and I-quants.
    ///
    /// A row's length (`dimensions[0]`) must be a multiple of it.
    package var blockSize: Int {
        switch self {
        case .f32, .f16, .bf16, .f64, .i8, .i16, .i32, .i64: 1
        case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q8_1, .iq4_NL, .mxfp4: 32
        case .q2_K, .q3_K, .q4_K, .q5_K, .q6_K, .q8_K, .iq2_XXS, .iq2_XS, .iq3_XXS, .iq1_S, .iq3_S, .iq2_S,
            .iq4_XS, .iq1_M, .tq1_0, .tq2_0:
            256
        }
    }

    /// Bytes per block, as `sizeof(block_…)` in ggml-common.h.
    package var bytesPerBlock: Int {
        switch self {
        case .i8: 1
        case .f16, .bf16, .i16: 2
        case .f32, .i32: 4
        case .f64, .i64: 8
        case .q4_0, .iq4_NL: 18
        case .q4_1: 20
        case .q5_0: 22
        case .q5_1: 24
        case .q8_0: 34
        case .q8_1: 36  // two fp16 (d, s) and 32 int8; gguf-py's table says 40, ggml's struct is 36
        case .mxfp4: 17
        case .q2_K: 84
        case .q3_K, .iq3_S: 110
        case .q4_K: 144
        case .q5_K: 176
        case .q6_K: 210
        case .q8_K: 292
        case .iq2_XXS, .tq2_0: 66
        case .iq2_XS: 74
        case .iq3_XXS: 98
        case .iq1_S: 50
        case .iq2_S: 82
        case .iq4_XS: 136
        case .iq1_M: 56
        case .tq1_0: 54
        }
    }

    /// Whether Loupe dequantizes this type (`GGUFFile.floats`, `dequantizeRow`).
    package var isSupported: Bool {
        switch self {
        case .f32, .f16, .bf16, .q8_0, .q4_0, .q4_1: true
        default: false
        }
    }

    /// The types Loupe dequantizes, by name, for error messages.
    package static let supportedNames = allCases.filter(\.isSupported).map(\.name).joined(separator: ", ")
}
