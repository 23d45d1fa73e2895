import CKernels
import COpenBLAS

/// Process-wide allocator settings for numeric work.
package enum Memory {
    /// Large temporaries stay in the heap and are reused instead of being mapped afresh
    /// (glibc's mmap and trim thresholds raised to 256 and 512 MiB).
    package static func keepLargeAllocationsInTheHeap() { loupe_keep_large_allocations_in_heap() }

    /// Makes room in `array` for `more` elements. Where it must grow (doubling), and the new
    /// storage is 4 MiB or more, that storage is advised for transparent huge pages
    /// (`loupe_advise_huge_pages`) before anything is written to it, then filled with the old
    /// elements. For arrays read at random (an HNSW graph and its vectors): a 4 KiB page per
    /// row read is a TLB miss and a page walk at nearly every step.
    package static func reserveInHugePages<Element>(_ array: inout [Element], adding more: Int) {
        let needed = array.count + more
        guard needed > array.capacity else { return }
        let capacity = Swift.max(needed, 2 * array.capacity)
        guard capacity * MemoryLayout<Element>.stride >= 4 << 20 else { return array.reserveCapacity(capacity) }
        let old = array
        array = [Element](unsafeUninitializedCapacity: capacity) { buffer, count in
            loupe_advise_huge_pages(buffer.baseAddress, buffer.count * MemoryLayout<Element>.stride)
            count = buffer.initialize(fromContentsOf: old)
        }
    }
}
