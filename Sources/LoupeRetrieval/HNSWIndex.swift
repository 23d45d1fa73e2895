import CKernels
import Foundation
import LoupeTensor

/// Hierarchical Navigable Small World graph (Malkov & Yashunin 2018) over unit vectors, distance
/// 1 − cosine: incremental inserts, deletes by tombstone (a deleted node still routes searches
/// but is never returned).
package struct HNSWIndex: Sendable {
    /// How the search's beam on level 0 measures distances. `.int8` scores the beam on 8-bit
    /// copies of the vectors (a quarter of the bytes a candidate costs) and ranks what it found by
    /// the exact float distance; `.float32` scores the beam on the vectors themselves. The scores
    /// returned are exact either way; only which nodes the beam reaches can differ.
    package enum Beam: String, Sendable, Hashable, CaseIterable, Codable {
        case float32, int8
    }

    package struct Parameters: Hashable, Sendable, Codable {
        /// Links per node on the upper levels (2M on level 0).
        package var m: Int
        package var efConstruction: Int
        package var efSearch: Int
        package var seed: UInt64
        /// How an insert measures distances: its beam (efConstruction wide), the neighbour
        /// heuristic, and the pruning of a neighbour's full list. `.int8` measures all of them on
        /// the 8-bit vectors (a quarter of the bytes; the rows a build reads stay in cache far
        /// longer), `.float32` on the vectors themselves. Searches rank exactly either way.
        package var buildBeam: Beam

        package init(
            m: Int = 16, efConstruction: Int = 200, efSearch: Int = 64, seed: UInt64 = 42, buildBeam: Beam = .int8
        ) {
            self.m = m
            self.efConstruction = efConstruction
            self.efSearch = efSearch
            self.seed = seed
            self.buildBeam = buildBeam
        }
    }

    package let dimensions: Int
    package private(set) var parameters: Parameters
    package private(set) var vectors: [Float] = []
    /// Each vector in 8 bits for the search's beam (`Beam.int8`): `codes[node * dimensions...]`,
    /// times `codeScales[node]` (its largest magnitude over 127). A quarter of the vectors' bytes,
    /// derived from them (never stored in the blob).
    private var codes: [Int8] = []
    private var codeScales: [Float] = []
    /// Level 0's links, flat: `width` Int32 per node, its neighbour count and then up to 2M
    /// neighbours. Every search spends nearly all its time on level 0, so a node's list is one
    /// offset away instead of behind two array headers (and a neighbour added during a build is
    /// written in place instead of copying the list).
    private var bottom: [Int32] = []
    /// `upper[node][level - 1]`: neighbours of `node` on levels 1 and up (none for most nodes).
    private var upper: [[[Int32]]] = []
    package private(set) var deleted: [Bool] = []
    /// Each node's caller-given label (a chunk id; by default the node itself), as hnswlib's.
    package private(set) var labels: [Int64] = []
    package private(set) var entryPoint: Int32 = -1
    var random: UInt64

    /// Int32 slots per node in `bottom`.
    private var width: Int { 2 * parameters.m + 1 }
    package var count: Int { upper.count }
    package var deletedCount: Int { deleted.reduce(0) { $0 + ($1 ? 1 : 0) } }
    /// Bytes of the graph as it is held: level 0's fixed slots for every node, plus the upper
    /// levels' links as Int32.
    package var graphBytes: Int {
        bottom.count * 4 + upper.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count * 4 } }
    }
    package var maxLevel: Int { entryPoint < 0 ? -1 : upper[Int(entryPoint)].count }
    /// `links[node][level]`: neighbours of `node` on `level`.
    package var links: [[[Int32]]] { (0..<count).map(levels(of:)) }

    /// `node`'s neighbours on each of its levels, level 0 first.
    package func levels(of node: Int) -> [[Int32]] {
        let at = node * width
        return [Array(bottom[(at + 1)..<(at + 1 + Int(bottom[at]))])] + upper[node]
    }

    package init(dimensions: Int, parameters: Parameters = Parameters()) {
        self.dimensions = dimensions
        self.parameters = parameters
        self.random = parameters.seed | 1
    }

    /// An index from its parts; nil when a level holds more links than M allows (2M on level 0).
    init?(
        dimensions: Int, parameters: Parameters, vectors: [Float], links: [[[Int32]]], deleted: [Bool],
        labels: [Int64], entryPoint: Int32, random: UInt64
    ) {
        self.dimensions = dimensions
        self.parameters = parameters
        self.vectors = vectors
        self.deleted = deleted
        self.labels = labels
        self.entryPoint = entryPoint
        self.random = random
        let width = 2 * parameters.m + 1
        Memory.reserveInHugePages(&bottom, adding: links.count * width)
        upper.reserveCapacity(links.count)
        for levels in links {
            guard let first = levels.first, first.count < width,
                levels.dropFirst().allSatisfy({ $0.count <= parameters.m })
            else { return nil }
            bottom.append(Int32(first.count))
            bottom.append(contentsOf: first)
            bottom.append(contentsOf: repeatElement(0, count: width - 1 - first.count))
            upper.append(Array(levels.dropFirst()))
        }
        let rows = vectors.count / max(dimensions, 1)
        guard rows * dimensions == vectors.count else { return nil }
        Memory.reserveInHugePages(&codes, adding: vectors.count)
        for row in 0..<rows { appendCodes(row: row) }
    }

    /// Quantizes vector `row` (already in `vectors`) into `codes` and `codeScales`.
    private mutating func appendCodes(row: Int) {
        let start = codes.count
        codes.append(contentsOf: repeatElement(0, count: dimensions))
        let scale = vectors.withUnsafeBufferPointer { v in
            codes.withUnsafeMutableBufferPointer { c in
                loupe_quantize_row_i8(v.baseAddress! + row * dimensions, dimensions, c.baseAddress! + start)
            }
        }
        codeScales.append(scale)
    }

    private mutating func randomLevel() -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let uniform = Double(random >> 11) / Double(1 << 53)
        return Int(-log(max(uniform, 1e-300)) / log(Double(parameters.m)))
    }

    /// Adds a vector (unit length) under `label` (default: its node); returns its node (its
    /// position).
    @discardableResult
    package mutating func add(_ vector: [Float], label: Int64? = nil) -> Int {
        precondition(vector.count == dimensions, "vector of \(vector.count), index of \(dimensions)")
        let node = Int32(count)
        let level = randomLevel()
        // Beams read codes and lists at random, and a search's exact ranking vectors: storage in
        // huge pages spares a TLB miss a read.
        Memory.reserveInHugePages(&vectors, adding: dimensions)
        Memory.reserveInHugePages(&codes, adding: dimensions)
        Memory.reserveInHugePages(&bottom, adding: width)
        vectors.append(contentsOf: vector)
        appendCodes(row: Int(node))
        bottom.append(contentsOf: repeatElement(0, count: width))
        upper.append(Array(repeating: [], count: level))
        deleted.append(false)
        labels.append(label ?? Int64(node))
        guard entryPoint >= 0 else {
            entryPoint = node
            return Int(node)
        }
        let beam = parameters.buildBeam
        vector.withUnsafeBufferPointer { q in
            let query = q.baseAddress!
            let top = maxLevel
            let (current, currentDistance) = withScore(query, beam: beam) { descend(to: level, score: $0) }
            var entries = [(distance: currentDistance, node: current)]
            for layer in stride(from: min(level, top), through: 0, by: -1) {
                let candidates = withScore(query, beam: beam) { score in
                    searchLayer(entries: entries, ef: parameters.efConstruction, level: layer, score: score)
                }
                let chosen = selectNeighbours(candidates, count: parameters.m).map(\.node)
                setNeighbours(of: node, on: layer, to: chosen)
                for neighbour in chosen { link(neighbour, to: node, on: layer) }
                entries = candidates
            }
        }
        if level > maxLevel { entryPoint = node }
        return Int(node)
    }

    private mutating func setNeighbours(of node: Int32, on level: Int, to list: [Int32]) {
        guard level == 0 else {
            upper[Int(node)][level - 1] = list
            return
        }
        let at = Int(node) * width
        bottom[at] = Int32(list.count)
        for (i, neighbour) in list.enumerated() { bottom[at + 1 + i] = neighbour }
    }

    /// Adds `node` to `neighbour`'s links on `level`; past the level's limit (2M on level 0, M
    /// above), the list is chosen again by the heuristic, closest first.
    private mutating func link(_ neighbour: Int32, to node: Int32, on level: Int) {
        let limit = level == 0 ? 2 * parameters.m : parameters.m
        let at = Int(neighbour) * width
        if level == 0, Int(bottom[at]) < limit {
            bottom[at + 1 + Int(bottom[at])] = node
            bottom[at] += 1
            return
        }
        var list = level == 0 ? Array(bottom[(at + 1)..<(at + 1 + limit)]) : upper[Int(neighbour)][level - 1]
        list.append(node)
        if list.count > limit {
            var dots = [Float](repeating: 0, count: list.count)
            measure(from: neighbour, to: list, into: &dots)
            let scored = zip(dots, list).map { (distance: 1 - $0.0, node: $0.1) }.sorted { $0.distance < $1.distance }
            list = selectNeighbours(scored, count: limit).map(\.node)
        }
        setNeighbours(of: neighbour, on: level, to: list)
    }

    /// `nodes` with their exact distances to `query`, closest first (ties by node).
    private func exactly(_ query: UnsafePointer<Float>, _ nodes: [Int32]) -> [(distance: Float, node: Int32)] {
        var dots = [Float](repeating: 0, count: nodes.count)
        vectors.withUnsafeBufferPointer { rows in
            loupe_dot_rows_f32(query, rows.baseAddress!, nodes, nodes.count, dimensions, &dots)
        }
        return zip(dots, nodes).map { (distance: 1 - $0.0, node: $0.1) }
            .sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.node < $1.node }
    }

    /// Marks `node` deleted: it still routes searches, but is never returned.
    package mutating func delete(_ node: Int) { deleted[node] = true }

    /// The query's dot products with nodes, as a beam measures them: `score(ids, n, dots)` writes
    /// those with nodes `ids[0..<n]` into `dots`.
    private struct Score {
        let scorer: loupe_hnsw_scorer

        func callAsFunction(_ ids: UnsafePointer<Int32>, _ n: Int, _ dots: UnsafeMutablePointer<Float>) {
            withUnsafePointer(to: scorer) { loupe_hnsw_score($0, ids, n, dots) }
        }
    }

    /// Calls `body` with the scorer of `query` that `beam` names: on the float vectors, or on the
    /// 8-bit codes with the query in 16 bits.
    private func withScore<Result>(_ query: UnsafePointer<Float>, beam: Beam, _ body: (Score) -> Result) -> Result {
        vectors.withUnsafeBufferPointer { rows in
            switch beam {
            case .float32:
                return body(
                    Score(
                        scorer: loupe_hnsw_scorer(
                            query: query, rows: rows.baseAddress, query16: nil, query_scale: 0, codes: nil, scales: nil,
                            count: dimensions)))
            case .int8:
                var query16 = [Int16](repeating: 0, count: dimensions)
                let queryScale = loupe_quantize_query_i16(query, dimensions, &query16)
                return query16.withUnsafeBufferPointer { q16 in
                    codes.withUnsafeBufferPointer { codes in
                        codeScales.withUnsafeBufferPointer { scales in
                            body(
                                Score(
                                    scorer: loupe_hnsw_scorer(
                                        query: query, rows: rows.baseAddress, query16: q16.baseAddress,
                                        query_scale: queryScale, codes: codes.baseAddress, scales: scales.baseAddress,
                                        count: dimensions)))
                        }
                    }
                }
            }
        }
    }

    /// `node`'s distance by `score`.
    private func distanceOf(_ node: Int32, _ score: Score) -> Float {
        var ids = node
        var dot: Float = 0
        score(&ids, 1, &dot)
        return 1 - dot
    }

    /// From the entry point down to `floor` (exclusive), greedily on each level: the node closest
    /// to the query there, and its distance by `score`.
    private func descend(to floor: Int, score: Score) -> (Int32, Float) {
        var current = entryPoint
        var distance = distanceOf(current, score)
        for level in stride(from: maxLevel, to: floor, by: -1) {
            (current, distance) = greedy(from: current, distance: distance, level: level, score: score)
        }
        return (current, distance)
    }

    /// Walks to the closest node on `level` (1 or above), one neighbour at a time.
    private func greedy(from start: Int32, distance startDistance: Float, level: Int, score: Score) -> (Int32, Float) {
        var current = start
        var best = startDistance
        var changed = true
        var dots = [Float](repeating: 0, count: parameters.m + 1)
        while changed {
            changed = false
            let neighbours = upper[Int(current)][level - 1]
            if neighbours.isEmpty { break }
            if dots.count < neighbours.count { dots = [Float](repeating: 0, count: neighbours.count) }
            neighbours.withUnsafeBufferPointer { ids in
                dots.withUnsafeMutableBufferPointer { score(ids.baseAddress!, ids.count, $0.baseAddress!) }
            }
            for (i, neighbour) in neighbours.enumerated() where 1 - dots[i] < best {
                best = 1 - dots[i]
                current = neighbour
                changed = true
            }
        }
        return (current, best)
    }

    /// The beam search of one level: the `ef` closest nodes found, closest first. Level 0's runs
    /// in C (`loupe_hnsw_beam`); the upper levels', small and rare, here.
    private func searchLayer(entries: [(distance: Float, node: Int32)], ef: Int, level: Int, score: Score)
        -> [(distance: Float, node: Int32)]
    {
        if level == 0 {
            var visited = [UInt64](repeating: 0, count: (count + 63) / 64)
            var distances = [Float](repeating: 0, count: ef)
            var nodes = [Int32](repeating: 0, count: ef)
            var scorer = score.scorer
            let found = loupe_hnsw_beam(
                bottom, width, &scorer, entries.map(\.node), entries.map(\.distance), entries.count, ef, &visited,
                &distances, &nodes)
            precondition(found >= 0, "HNSW search: out of memory")
            return (0..<found).map { (distance: distances[$0], node: nodes[$0]) }
        }
        // A bitset over the nodes: cheaper than hashing every visit.
        var visited = [UInt64](repeating: 0, count: (count + 63) / 64)
        @inline(__always) func firstVisit(_ node: Int32) -> Bool {
            let word = Int(node) >> 6
            let bit = UInt64(1) << UInt64(Int(node) & 63)
            if visited[word] & bit != 0 { return false }
            visited[word] |= bit
            return true
        }
        var candidates = DistanceHeap(farthestOnTop: false)  // to expand, closest first
        var results = DistanceHeap(farthestOnTop: true)  // kept, farthest on top
        for entry in entries {
            _ = firstVisit(entry.node)
            candidates.push(entry)
            results.push(entry)
            if results.count > ef { results.pop() }
        }
        // A node's unvisited neighbours, scored together so their vectors' misses overlap. No
        // upper level holds more than M links.
        var fresh = [Int32](repeating: 0, count: parameters.m)
        var dots = [Float](repeating: 0, count: parameters.m)
        while let closest = candidates.pop() {
            if results.count >= ef, closest.distance > results.top!.distance { break }
            var n = 0
            for neighbour in upper[Int(closest.node)][level - 1] where firstVisit(neighbour) {
                fresh[n] = neighbour
                n += 1
            }
            score(fresh, n, &dots)
            for i in 0..<n {
                let d = 1 - dots[i]
                if results.count < ef || d < results.top!.distance {
                    candidates.push((d, fresh[i]))
                    results.push((d, fresh[i]))
                    if results.count > ef { results.pop() }
                }
            }
        }
        return results.items.sorted { $0.distance < $1.distance }
    }

    /// Malkov's heuristic: take candidates closest first, keeping one only when it is closer to
    /// the new node than to every neighbour kept so far (spreads links across directions). The
    /// distances between candidates are the build's (`measure`), as the candidates' own are.
    private func selectNeighbours(_ candidates: [(distance: Float, node: Int32)], count: Int)
        -> [(distance: Float, node: Int32)]
    {
        var kept: [(distance: Float, node: Int32)] = []
        var keptNodes: [Int32] = []
        kept.reserveCapacity(count)
        keptNodes.reserveCapacity(count)
        var dots = [Float](repeating: 0, count: count)
        for candidate in candidates where kept.count < count {
            measure(from: candidate.node, to: keptNodes, into: &dots)
            if dots.prefix(keptNodes.count).allSatisfy({ 1 - $0 > candidate.distance }) {
                kept.append(candidate)
                keptNodes.append(candidate.node)
            }
        }
        return kept
    }

    /// `dots[i]` = node `from`'s dot product with `nodes[i]` as a build measures it
    /// (`parameters.buildBeam`): on the float vectors, or on the 8-bit codes alone. Four rows at
    /// a time with the next four prefetched.
    private func measure(from node: Int32, to nodes: [Int32], into dots: inout [Float]) {
        guard !nodes.isEmpty else { return }
        precondition(dots.count >= nodes.count)
        switch parameters.buildBeam {
        case .float32:
            vectors.withUnsafeBufferPointer { v in
                loupe_dot_rows_f32(
                    v.baseAddress! + Int(node) * dimensions, v.baseAddress!, nodes, nodes.count, dimensions, &dots)
            }
        case .int8:
            withUnsafeTemporaryAllocation(of: Int16.self, capacity: dimensions) { scratch in
                codes.withUnsafeBufferPointer { c in
                    codeScales.withUnsafeBufferPointer { s in
                        loupe_dot_code_rows_i8(
                            c.baseAddress!, s.baseAddress!, node, nodes, nodes.count, dimensions, scratch.baseAddress!,
                            &dots)
                    }
                }
            }
        }
    }

    /// The `k` nearest live nodes to `query` (unit length), closest first, with cosine similarity.
    /// Every level's walk measures distances as `beam` says; with `.int8` what level 0's beam
    /// found is ranked by the exact distances.
    package func search(_ query: [Float], k: Int, ef: Int? = nil, beam: Beam = .int8) -> [(index: Int, score: Float)] {
        guard entryPoint >= 0 else { return [] }
        let ef = max(ef ?? parameters.efSearch, k)
        return query.withUnsafeBufferPointer { q in
            let pointer = q.baseAddress!
            let found = withScore(pointer, beam: beam) { score in
                let (current, distance) = descend(to: 0, score: score)
                return searchLayer(entries: [(distance, current)], ef: ef, level: 0, score: score)
            }
            let live =
                beam == .int8
                ? exactly(pointer, found.map(\.node).filter { !deleted[Int($0)] })
                : found.filter { !deleted[Int($0.node)] }
            return live.prefix(k).map { (Int($0.node), 1 - $0.distance) }
        }
    }
}

/// A binary heap of (distance, node) for the beam search: closest on top for the candidates to
/// expand, farthest on top for the results kept.
private struct DistanceHeap {
    let farthestOnTop: Bool
    var items: [(distance: Float, node: Int32)] = []
    var count: Int { items.count }
    var top: (distance: Float, node: Int32)? { items.first }

    init(farthestOnTop: Bool) { self.farthestOnTop = farthestOnTop }

    /// Whether `a` belongs above `b`.
    @inline(__always) private func above(_ a: Float, _ b: Float) -> Bool { farthestOnTop ? a > b : a < b }

    mutating func push(_ item: (distance: Float, node: Int32)) {
        items.append(item)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard above(items[i].distance, items[parent].distance) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    @discardableResult
    mutating func pop() -> (distance: Float, node: Int32)? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let left = 2 * i + 1
                guard left < items.count else { break }
                var child = left
                if left + 1 < items.count, above(items[left + 1].distance, items[left].distance) { child = left + 1 }
                guard above(items[child].distance, items[i].distance) else { break }
                items.swapAt(i, child)
                i = child
            }
        }
        return top
    }
}
