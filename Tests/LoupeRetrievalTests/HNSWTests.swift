import CKernels
import Foundation
import LoupeRetrieval
import Testing

@Suite struct HNSWTests {
    /// Unit vectors around `clusters` random centres (xorshift, fixed seed).
    static func clustered(_ count: Int, dimensions: Int, clusters: Int, seed: UInt64) -> [[Float]] {
        var state = seed | 1
        func next() -> Float {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Float(Int64(bitPattern: state) % 1_000_000) / 1_000_000
        }
        let centres = (0..<clusters).map { _ in (0..<dimensions).map { _ in next() } }
        return (0..<count).map { index in
            let v = centres[index % clusters].map { $0 + 0.35 * next() }
            let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return v.map { $0 / norm }
        }
    }

    @Test func findsTheExactNeighboursAtHighRecall() {
        let vectors = Self.clustered(1500, dimensions: 32, clusters: 30, seed: 7)
        let queries = Self.clustered(50, dimensions: 32, clusters: 30, seed: 99)
        var flat = FlatIndex(dimensions: 32)
        for vector in vectors { flat.add(vector) }
        // Built on the floats, and on the 8-bit codes alone (the default); searched either way.
        for build in HNSWIndex.Beam.allCases {
            var index = HNSWIndex(
                dimensions: 32, parameters: .init(m: 12, efConstruction: 100, efSearch: 64, buildBeam: build))
            for vector in vectors { index.add(vector) }
            #expect(index.count == 1500 && index.maxLevel >= 1)
            for beam in HNSWIndex.Beam.allCases {
                Self.expectHighRecall(index, flat: flat, vectors: vectors, queries: queries, beam: beam, build: build)
            }
        }
    }

    private static func expectHighRecall(
        _ index: HNSWIndex, flat: FlatIndex, vectors: [[Float]], queries: [[Float]], beam: HNSWIndex.Beam,
        build: HNSWIndex.Beam
    ) {
        var found = 0
        for query in queries {
            let exact = Set(flat.search(query, k: 10).map(\.index))
            let approximate = index.search(query, k: 10, beam: beam)
            #expect(approximate.count == 10)
            #expect(zip(approximate, approximate.dropFirst()).allSatisfy { $0.score >= $1.score })
            // The scores are the exact cosines, whichever beam found the nodes.
            for hit in approximate {
                let cosine = zip(query, vectors[hit.index]).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                #expect(abs(hit.score - cosine) < 1e-5, "\(beam): \(hit.score) against \(cosine)")
            }
            found += approximate.filter { exact.contains($0.index) }.count
        }
        let recall = Double(found) / Double(queries.count * 10)
        #expect(recall >= 0.95, "built on \(build), \(beam) beam: recall@10 \(recall)")
    }

    /// What a build on the codes measures between two nodes: the integer dot product of their
    /// codes times both scales, for 1 to 9 rows (the kernel's four at a time and the one to three
    /// left), rows of 37 and 384 codes (past 16 and 32 a step, and not).
    @Test(arguments: [37, 384])
    func codeRowsDotAsTheirIntegersSay(dimensions: Int) {
        let rows = Self.clustered(12, dimensions: dimensions, clusters: 3, seed: 11)
        var codes = [Int8](repeating: 0, count: rows.count * dimensions)
        var scales = [Float](repeating: 0, count: rows.count)
        for (r, row) in rows.enumerated() {
            scales[r] = codes.withUnsafeMutableBufferPointer {
                loupe_quantize_row_i8(row, dimensions, $0.baseAddress! + r * dimensions)
            }
        }
        var scratch = [Int16](repeating: 0, count: dimensions)
        for n in 1...9 {
            let from = Int32(n % 3)
            let ids = (0..<n).map { Int32((5 * $0 + n) % rows.count) }
            var dots = [Float](repeating: .nan, count: n)
            loupe_dot_code_rows_i8(codes, scales, from, ids, n, dimensions, &scratch, &dots)
            for (i, id) in ids.enumerated() {
                let integer = (0..<dimensions).reduce(0) {
                    $0 + Int(codes[Int(from) * dimensions + $1]) * Int(codes[Int(id) * dimensions + $1])
                }
                let expected = Float(integer) * scales[Int(id)] * scales[Int(from)]
                #expect(abs(dots[i] - expected) <= 1e-6 * max(1, abs(expected)), "n \(n), row \(i)")
                // And close to the float rows' own dot product.
                let exact = zip(rows[Int(from)], rows[Int(id)]).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                #expect(abs(dots[i] - exact) < 0.02, "n \(n), row \(i): \(dots[i]) against \(exact)")
            }
        }
    }

    /// With a beam as wide as the index, the 8-bit beam reaches every node, so the exact rerank
    /// must give the flat index's list: rows of 37 (past the kernel's 16 a step), a zero vector
    /// and k from 1 to 9 (the kernel's four rows at a time, and the one to three left).
    @Test func theEightBitBeamRankedExactlyIsTheFlatListWhenItSeesEverything() {
        var vectors = Self.clustered(300, dimensions: 37, clusters: 10, seed: 3)
        vectors[17] = [Float](repeating: 0, count: 37)
        let queries = Self.clustered(20, dimensions: 37, clusters: 10, seed: 5)
        var index = HNSWIndex(dimensions: 37, parameters: .init(m: 8, efConstruction: 64))
        var flat = FlatIndex(dimensions: 37)
        for vector in vectors {
            index.add(vector)
            flat.add(vector)
        }
        for (position, query) in queries.enumerated() {
            let k = 1 + position % 9
            let exact = flat.search(query, k: k)
            let found = index.search(query, k: k, ef: 300, beam: .int8)
            #expect(found.map(\.index) == exact.map(\.index))
            #expect(zip(found, exact).allSatisfy { abs($0.score - $1.score) < 1e-5 })
        }
        #expect(index.search(vectors[17], k: 3, beam: .int8).allSatisfy { $0.score == 0 })
    }

    @Test func deletedNodesAreNeverReturnedButStillRoute() {
        let vectors = Self.clustered(400, dimensions: 16, clusters: 8, seed: 3)
        var index = HNSWIndex(dimensions: 16, parameters: .init(m: 8, efConstruction: 64, efSearch: 64))
        for vector in vectors { index.add(vector) }
        let query = vectors[10]
        #expect(index.search(query, k: 1).first?.index == 10)
        index.delete(10)
        let after = index.search(query, k: 5)
        #expect(!after.contains { $0.index == 10 })
        #expect(after.count == 5)
        // Inserting after searching keeps working.
        let id = index.add(query)
        #expect(index.search(query, k: 1).first?.index == id)
    }

    @Test func theIndexBlobRoundTripsAndABrokenOneIsRefused() {
        let vectors = Self.clustered(300, dimensions: 16, clusters: 6, seed: 5)
        var index = HNSWIndex(dimensions: 16, parameters: .init(m: 8, efConstruction: 40, efSearch: 32))
        for (row, vector) in vectors.enumerated() { index.add(vector, label: Int64(1000 + row)) }
        index.delete(3)
        let data = index.serialized()
        var back = HNSWIndex(serialized: data, dimensions: 16)
        #expect(back?.count == 300 && back?.deleted[3] == true && back?.entryPoint == index.entryPoint)
        #expect(back?.labels == index.labels && back?.vectors == index.vectors)
        for query in vectors.prefix(20) {
            #expect(back?.search(query, k: 5).map(\.index) == index.search(query, k: 5).map(\.index))
        }
        // It keeps growing as the original would: same levels, same links.
        let extra = Self.clustered(20, dimensions: 16, clusters: 2, seed: 9)
        for vector in extra {
            index.add(vector, label: 7)
            back?.add(vector, label: 7)
        }
        #expect(back?.links == index.links && back?.entryPoint == index.entryPoint)
        #expect(HNSWIndex(serialized: data.dropLast(2), dimensions: 16) == nil)
        #expect(HNSWIndex(serialized: data + Data([0]), dimensions: 16) == nil)
        #expect(HNSWIndex(serialized: data, dimensions: 8) == nil)
    }
}
