#include "ckernels.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void loupe_keep_large_allocations_in_heap(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}
