import CKernels
import Foundation

/// Hierarchical Navigable Small World graph (Malkov & Yashunin 2018) over unit vectors, distance
/// 1 − cosine: incremental inserts, deletes by tombstone (a deleted node still routes searches
/// but is never returned).
package struct HNSWIndex: Sendable {
    package struct Parameters: Hashable, Sendable, Codable {
        /// Links per node on the upper levels (2M on level 0).
        package var m: Int
        package var efConstruction: Int
        package var efSearch: Int
        package var seed: UInt64

        package init(m: Int = 16, efConstruction: Int = 200, efSearch: Int = 64, seed: UInt64 = 42) {
            self.m = m
            self.efConstruction = efConstruction
            self.efSearch = efSearch
            self.seed = seed
        }
    }

    package let dimensions: Int
    package private(set) var parameters: Parameters
    package private(set) var vectors: [Float] = []
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
        bottom.reserveCapacity(links.count * width)
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
    }

    private func distance(_ query: UnsafePointer<Float>, _ node: Int32) -> Float {
        vectors.withUnsafeBufferPointer { v in
            1 - loupe_dot_f32(query, v.baseAddress! + Int(node) * dimensions, dimensions)
        }
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
        vectors.append(contentsOf: vector)
        bottom.append(contentsOf: repeatElement(0, count: width))
        upper.append(Array(repeating: [], count: level))
        deleted.append(false)
        labels.append(label ?? Int64(node))
        guard entryPoint >= 0 else {
            entryPoint = node
            return Int(node)
        }
        vector.withUnsafeBufferPointer { q in
            let query = q.baseAddress!
            var current = entryPoint
            var currentDistance = distance(query, current)
            let top = maxLevel
            if top > level {
                for layer in stride(from: top, to: level, by: -1) {
                    (current, currentDistance) = greedy(query, from: current, distance: currentDistance, level: layer)
                }
            }
            var entries = [(distance: currentDistance, node: current)]
            for layer in stride(from: min(level, top), through: 0, by: -1) {
                let candidates = searchLayer(query, entries: entries, ef: parameters.efConstruction, level: layer)
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
            let scored = vectors.withUnsafeBufferPointer { v in
                let base = v.baseAddress! + Int(neighbour) * dimensions
                return list.map { (distance: distance(base, $0), node: $0) }.sorted { $0.distance < $1.distance }
            }
            list = selectNeighbours(scored, count: limit).map(\.node)
        }
        setNeighbours(of: neighbour, on: level, to: list)
    }

    /// Marks `node` deleted: it still routes searches, but is never returned.
    package mutating func delete(_ node: Int) { deleted[node] = true }

    /// Walks to the closest node on `level` (1 or above), one neighbour at a time.
    private func greedy(_ query: UnsafePointer<Float>, from start: Int32, distance startDistance: Float, level: Int)
        -> (Int32, Float)
    {
        var current = start
        var best = startDistance
        var changed = true
        var dots = [Float](repeating: 0, count: 2 * parameters.m + 1)
        vectors.withUnsafeBufferPointer { rows in
            while changed {
                changed = false
                let neighbours = upper[Int(current)][level - 1]
                if dots.count < neighbours.count { dots = [Float](repeating: 0, count: neighbours.count) }
                loupe_dot_rows_f32(query, rows.baseAddress!, neighbours, neighbours.count, dimensions, &dots)
                for (i, neighbour) in neighbours.enumerated() where 1 - dots[i] < best {
                    best = 1 - dots[i]
                    current = neighbour
                    changed = true
                }
            }
        }
        return (current, best)
    }

    /// The beam search of one level: the `ef` closest nodes found, closest first.
    private func searchLayer(
        _ query: UnsafePointer<Float>, entries: [(distance: Float, node: Int32)], ef: Int, level: Int
    )
        -> [(distance: Float, node: Int32)]
    {
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
        // level holds more than 2M links.
        let width = self.width
        let fresh = UnsafeMutablePointer<Int32>.allocate(capacity: width)
        let dots = UnsafeMutablePointer<Float>.allocate(capacity: width)
        defer {
            fresh.deallocate()
            dots.deallocate()
        }
        vectors.withUnsafeBufferPointer { rows in
            bottom.withUnsafeBufferPointer { bottom in
                /// Gathers `node`'s unvisited neighbours on `level` into `fresh`; returns how many.
                func unvisited(_ node: Int32) -> Int {
                    var n = 0
                    if level == 0 {
                        let at = Int(node) * width
                        for i in (at + 1)..<(at + 1 + Int(bottom[at])) where firstVisit(bottom[i]) {
                            fresh[n] = bottom[i]
                            n += 1
                        }
                    } else {
                        for neighbour in upper[Int(node)][level - 1] where firstVisit(neighbour) {
                            fresh[n] = neighbour
                            n += 1
                        }
                    }
                    return n
                }
                while let closest = candidates.pop() {
                    if results.count >= ef, closest.distance > results.top!.distance { break }
                    let n = unvisited(closest.node)
                    loupe_dot_rows_f32(query, rows.baseAddress!, fresh, n, dimensions, dots)
                    for i in 0..<n {
                        let d = 1 - dots[i]
                        if results.count < ef || d < results.top!.distance {
                            candidates.push((d, fresh[i]))
                            results.push((d, fresh[i]))
                            if results.count > ef { results.pop() }
                        }
                    }
                }
            }
        }
        return results.items.sorted { $0.distance < $1.distance }
    }

    /// Malkov's heuristic: take candidates closest first, keeping one only when it is closer to
    /// the new node than to every neighbour kept so far (spreads links across directions).
    private func selectNeighbours(_ candidates: [(distance: Float, node: Int32)], count: Int)
        -> [(distance: Float, node: Int32)]
    {
        var kept: [(distance: Float, node: Int32)] = []
        vectors.withUnsafeBufferPointer { v in
            for candidate in candidates where kept.count < count {
                let point = v.baseAddress! + Int(candidate.node) * dimensions
                let diverse = kept.allSatisfy {
                    1 - loupe_dot_f32(point, v.baseAddress! + Int($0.node) * dimensions, dimensions)
                        > candidate.distance
                }
                if diverse { kept.append(candidate) }
            }
        }
        return kept
    }

    /// The `k` nearest live nodes to `query` (unit length), closest first, with cosine similarity.
    package func search(_ query: [Float], k: Int, ef: Int? = nil) -> [(index: Int, score: Float)] {
        guard entryPoint >= 0 else { return [] }
        return query.withUnsafeBufferPointer { q in
            let pointer = q.baseAddress!
            var current = entryPoint
            var currentDistance = distance(pointer, current)
            for level in stride(from: maxLevel, to: 0, by: -1) {
                (current, currentDistance) = greedy(pointer, from: current, distance: currentDistance, level: level)
            }
            let found = searchLayer(
                pointer, entries: [(currentDistance, current)], ef: max(ef ?? parameters.efSearch, k), level: 0)
            return found.filter { !deleted[Int($0.node)] }.prefix(k).map { (Int($0.node), 1 - $0.distance) }
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
