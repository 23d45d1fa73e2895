import CKernels
import COpenBLAS

/// Process-wide allocator settings for numeric work.
package enum Memory {
    /// Large temporaries stay in the heap and are reused instead of being mapped afresh
    /// (glibc's mmap and trim thresholds raised to 256 and 512 MiB).
    package static func keepLargeAllocationsInTheHeap() { loupe_keep_large_allocations_in_heap() }
}
