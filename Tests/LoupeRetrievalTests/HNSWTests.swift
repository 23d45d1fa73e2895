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
        var index = HNSWIndex(dimensions: 32, parameters: .init(m: 12, efConstruction: 100, efSearch: 64))
        var flat = FlatIndex(dimensions: 32)
        for vector in vectors {
            index.add(vector)
            flat.add(vector)
        }
        #expect(index.count == 1500 && index.maxLevel >= 1)
        var found = 0
        for query in queries {
            let exact = Set(flat.search(query, k: 10).map(\.index))
            let approximate = index.search(query, k: 10)
            #expect(approximate.count == 10)
            #expect(zip(approximate, approximate.dropFirst()).allSatisfy { $0.score >= $1.score })
            found += approximate.filter { exact.contains($0.index) }.count
        }
        let recall = Double(found) / Double(queries.count * 10)
        #expect(recall >= 0.95, "recall@10 \(recall)")
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
