import Foundation

/// Top-k selection over a dense score array.
package enum TopK {
    /// Indices of the `k` largest positive scores, best first; equal scores keep index order.
    /// One pass keeps the best `k` so far in a binary min-heap whose root is the worst kept
    /// (lowest score, then highest index): a later document with the root's score ranks below
    /// it, so only a strictly higher score displaces it. O(n + m log k) for m displacements.
    package static func select(_ scores: [Double], k: Int) -> [(document: Int, score: Double)] {
        guard k > 0 else { return [] }
        var heap = Heap(capacity: k)
        defer { heap.deallocate() }
        // One comparison per document, against 0 until the heap is full and its root after:
        // once the root has risen, almost every document fails it, so the branch predicts well.
        var bar = 0.0
        scores.withUnsafeBufferPointer { scores in
            for document in 0..<scores.count where scores[document] > bar {
                if heap.count < k {
                    heap.push(scores[document], document)
                    if heap.count == k { bar = heap.scores[0] }
                } else {
                    heap.replaceRoot(scores[document], document)
                    bar = heap.scores[0]
                }
            }
        }
        // Pop the worst each time into the slot it frees: the array ends best first.
        let kept = heap.count
        while heap.count > 1 {
            let last = heap.count - 1
            heap.swap(0, last)
            heap.count = last
            heap.siftDown(0)
        }
        return (0..<kept).map { (heap.documents[$0], heap.scores[$0]) }
    }

    private struct Heap {
        let scores: UnsafeMutablePointer<Double>
        let documents: UnsafeMutablePointer<Int>
        var count = 0

        init(capacity: Int) {
            scores = .allocate(capacity: capacity)
            documents = .allocate(capacity: capacity)
        }

        func deallocate() {
            scores.deallocate()
            documents.deallocate()
        }

        /// Does slot `a` rank below slot `b`?
        @inline(__always) func worse(_ a: Int, _ b: Int) -> Bool {
            scores[a] < scores[b] || (scores[a] == scores[b] && documents[a] > documents[b])
        }

        @inline(__always) func swap(_ a: Int, _ b: Int) {
            (scores[a], scores[b]) = (scores[b], scores[a])
            (documents[a], documents[b]) = (documents[b], documents[a])
        }

        mutating func push(_ score: Double, _ document: Int) {
            scores[count] = score
            documents[count] = document
            var child = count
            count += 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard worse(child, parent) else { return }
                swap(child, parent)
                child = parent
            }
        }

        func replaceRoot(_ score: Double, _ document: Int) {
            scores[0] = score
            documents[0] = document
            siftDown(0)
        }

        func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < count else { return }
                var child = left
                if left + 1 < count && worse(left + 1, left) { child = left + 1 }
                guard worse(child, parent) else { return }
                swap(child, parent)
                parent = child
            }
        }
    }
}
