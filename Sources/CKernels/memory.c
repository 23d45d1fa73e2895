/* madvise and MADV_HUGEPAGE are declared for the default (BSD and System V) source only. */
#define _DEFAULT_SOURCE 1
#include "ckernels.h"

#include <stdint.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

void loupe_keep_large_allocations_in_heap(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

void loupe_advise_huge_pages(void *start, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t begin = ((uintptr_t)start + huge - 1) & ~(huge - 1), end = ((uintptr_t)start + bytes) & ~(huge - 1);
    /* Advice only: where the kernel has huge pages off, or the range is in use otherwise, nothing
       changes and nothing is lost. */
    if (end > begin) (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)start;
    (void)bytes;
#endif
}
