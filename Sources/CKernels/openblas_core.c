// OpenBLAS picks its kernels for the CPU when it loads (DYNAMIC_ARCH builds, as Debian's). A
// release that does not know the CPU's model number falls back to Prescott, SSE3 kernels: Debian
// 12's OpenBLAS 0.3.21 on Emerald Rapids (family 6, model 207) ran sgemm at 28 GFLOP/s on two
// cores instead of 105 with its SkylakeX kernels, and MiniLM at a quarter of its speed. Setting
// OPENBLAS_CORETYPE before the library loads is the documented remedy; a program cannot do that
// for itself, so this constructor (it runs after the library's own, before main and before any
// BLAS call) asks OpenBLAS to choose again with the core the CPU's features allow.
//
// The second case is a CPU it knows but serves less well: on AMD's Zen 4 (family 25 with AVX-512)
// 0.3.21 picks its Cooper Lake or Skylake-X kernels, 512-bit FMAs, which Zen 4 runs as two 256-bit
// halves. Its Zen kernels (256-bit, Haswell's) ran MiniLM fp32 3% faster on a 2-core EPYC
// (passages 30.6–30.7 against 29.8–29.9 a second, sentences 265–266 against 257–259, alternating
// in one binary), and sgemm 1024³ on both cores at 176 against 166 GFLOP/s. Zen 5 (family 26) has full-width
// 512-bit units and is left to OpenBLAS.
//
// Only those two choices are replaced, only when the CPU has what the replacement needs (the
// operating system saving the wider registers included), never when the user set
// OPENBLAS_CORETYPE, and the environment is left as it was so child processes (a Python peer
// with an OpenBLAS of its own) choose for themselves. The library's symbols are weak: a program
// linking CKernels without OpenBLAS, or an OpenBLAS built for one core, is left alone.
#include "ckernels.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

extern char *openblas_get_corename(void) __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));
extern int blas_thread_shutdown_(void) __attribute__((weak));

static char replaced[32];

/// The core the CPU's features allow: "SkylakeX" (AVX-512 F, CD, BW, DQ, VL), "Haswell" (AVX2
/// and FMA), else NULL. `__builtin_cpu_supports`, as the kernels ask, counts a feature only when
/// the operating system saves its registers.
static const char *supported_core(void) {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return NULL;
}

/// AMD family 25 (Zen 3 and Zen 4) with AVX-512: Zen 4.
static int is_zen4(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax, ebx, ecx, edx;
    if (!__builtin_cpu_is("amd") || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    unsigned family = (eax >> 8) & 0xf;
    if (family == 0xf) family += (eax >> 20) & 0xff;
    return family == 25 && __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

static void choose_core(void) {
    if (!openblas_get_corename || !gotoblas_dynamic_init || !gotoblas_dynamic_quit) return;
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *chosen = openblas_get_corename();
    if (!chosen) return;
    // `__builtin_cpu_is` and `__builtin_cpu_supports` read what this fills in, and in a
    // constructor it may not have run yet.
    __builtin_cpu_init();
    const char *core = NULL;
    if (strcmp(chosen, "Prescott") == 0) {
        core = supported_core();
    } else if ((strcmp(chosen, "Cooperlake") == 0 || strcmp(chosen, "SkylakeX") == 0) && is_zen4()) {
        core = "Zen";
    }
    if (!core) return;
    if (setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
    strncpy(replaced, chosen, sizeof replaced - 1);
}

const char *loupe_openblas_replaced_core(void) { return replaced[0] ? replaced : NULL; }

// OpenBLAS starts its worker threads as it loads, and each then spins (sched_yield) for its thread
// timeout, about a tenth of a second, before it sleeps; it spins so again after every threaded
// call. On two cores that took one from every command at start, BLAS or not (an import of a trace
// file, a second of parsing on both cores, gave the spinning thread 4% of its samples). Those
// threads are joined here; OpenBLAS starts them again on its next threaded call, as it does after
// a fork (`exec_blas`, "lazy re-init of the thread-pool").
static void park_threads(void) {
    if (blas_thread_shutdown_) blas_thread_shutdown_();
}

__attribute__((constructor)) static void loupe_openblas_setup(void) {
    choose_core();
    park_threads();
}
