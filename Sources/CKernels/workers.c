/* A persistent pool of helper threads for short parallel regions (see ckernels.h,
   loupe_workers_run).

   Why: a decode step of SmolLM2-135M runs ~150 products of 10-100 µs each. Handing each to
   Dispatch's concurrentPerform costs a wake-up of a pool thread per call, tens of µs on a busy
   machine, which ate the second core. Here each helper owns a slot: the caller fills it, bumps its
   `go` word and wakes the helper only if it parked; a helper spins a while on its word before
   parking (a futex on Linux, a condition variable elsewhere), so the next product of the same
   token usually finds it awake. The caller runs share 0 itself and waits for the others the same
   way: spin, then park on `pending`.

   One region at a time: a second caller (another thread, or a share calling back in) finds the
   pool taken and gets -1, and runs its region some other way. */
#define _GNU_SOURCE 1
#include "ckernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LOUPE_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define LOUPE_PAUSE() __asm__ __volatile__("yield")
#else
#define LOUPE_PAUSE() ((void)0)
#endif

enum { MAX_HELPERS = 63 };
/* How long a thread polls a word before parking: longer than the gap between two products of
   one token (a few µs), far shorter than a pause in generation, so an idle pool costs nothing. */
static const long SPIN_NANOSECONDS = 50000;

/* Each on its own cache line: the caller writes it, one helper reads it. */
typedef struct {
    _Atomic uint32_t go;
    _Atomic uint32_t parked;
    loupe_worker_fn fn;
    void *context;
    size_t index;
#if !defined(__linux__)
    pthread_mutex_t lock;
    pthread_cond_t wake;
#endif
    char padding[64];
} __attribute__((aligned(64))) helper_slot;

static helper_slot slots[MAX_HELPERS];
static size_t started; /* helpers running; only the pool's owner changes it */
static _Atomic int taken;
static _Atomic uint32_t pending __attribute__((aligned(64)));
static _Atomic uint32_t caller_parked;
#if !defined(__linux__)
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_done = PTHREAD_COND_INITIALIZER;
#endif

#if defined(__linux__)
static long now_nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Sleeps while *word == expected (spurious returns are fine: callers loop). */
static void park(_Atomic uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void unpark(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits until *word != seen: polls, then parks, announcing it in *parked first. Sequentially
   consistent on both sides: the waker stores *word then reads *parked; this thread stores
   *parked then reads *word, so one of the two sees the other's store. */
static uint32_t wait_change(_Atomic uint32_t *word, uint32_t seen, _Atomic uint32_t *parked) {
    long deadline = now_nanoseconds() + SPIN_NANOSECONDS;
    for (unsigned spin = 1;; spin++) {
        uint32_t now = atomic_load_explicit(word, memory_order_acquire);
        if (now != seen) return now;
        LOUPE_PAUSE();
        if (spin % 64 == 0 && now_nanoseconds() > deadline) break;
    }
    for (;;) {
        atomic_store(parked, 1);
        uint32_t now = atomic_load(word);
        if (now != seen) {
            atomic_store_explicit(parked, 0, memory_order_relaxed);
            return now;
        }
        park(word, seen);
        atomic_store_explicit(parked, 0, memory_order_relaxed);
    }
}
#endif

static void *helper_main(void *argument) {
    helper_slot *slot = argument;
    uint32_t seen = 0;
    for (;;) {
#if defined(__linux__)
        seen = wait_change(&slot->go, seen, &slot->parked);
#else
        pthread_mutex_lock(&slot->lock);
        while (atomic_load(&slot->go) == seen) pthread_cond_wait(&slot->wake, &slot->lock);
        seen = atomic_load(&slot->go);
        pthread_mutex_unlock(&slot->lock);
#endif
        slot->fn(slot->context, slot->index);
        if (atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel) == 1) {
#if defined(__linux__)
            if (atomic_load(&caller_parked)) unpark(&pending);
#else
            pthread_mutex_lock(&pending_lock);
            pthread_cond_signal(&pending_done);
            pthread_mutex_unlock(&pending_lock);
#endif
        }
    }
    return NULL;
}

/* Starts helpers until `count` run; returns how many do (fewer if a thread cannot be made). */
static size_t start_helpers(size_t count) {
    while (started < count) {
        helper_slot *slot = &slots[started];
        slot->index = started + 1;
#if !defined(__linux__)
        pthread_mutex_init(&slot->lock, NULL);
        pthread_cond_init(&slot->wake, NULL);
#endif
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 1 << 20);
        pthread_t thread;
        int failed = pthread_create(&thread, &attributes, helper_main, slot);
        pthread_attr_destroy(&attributes);
        if (failed) break;
        pthread_detach(thread);
        started++;
    }
    return started;
}

int loupe_workers_run(size_t workers, loupe_worker_fn fn, void *context) {
    if (workers <= 1) {
        fn(context, 0);
        return 0;
    }
    if (workers - 1 > MAX_HELPERS) return -1;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&taken, &expected, 1)) return -1;
    if (start_helpers(workers - 1) < workers - 1) {
        atomic_store(&taken, 0);
        return -1;
    }
    atomic_store_explicit(&pending, (uint32_t)(workers - 1), memory_order_relaxed);
    for (size_t i = 0; i + 1 < workers; i++) {
        helper_slot *slot = &slots[i];
        slot->fn = fn;
        slot->context = context;
#if defined(__linux__)
        atomic_fetch_add(&slot->go, 1);
        if (atomic_load(&slot->parked)) unpark(&slot->go);
#else
        pthread_mutex_lock(&slot->lock);
        atomic_fetch_add(&slot->go, 1);
        pthread_cond_signal(&slot->wake);
        pthread_mutex_unlock(&slot->lock);
#endif
    }
    fn(context, 0);
#if defined(__linux__)
    uint32_t left = atomic_load_explicit(&pending, memory_order_acquire);
    while (left != 0) {
        /* wait_change returns on any change; loop until the count reaches zero. */
        left = wait_change(&pending, left, &caller_parked);
    }
#else
    pthread_mutex_lock(&pending_lock);
    while (atomic_load(&pending) != 0) pthread_cond_wait(&pending_done, &pending_lock);
    pthread_mutex_unlock(&pending_lock);
#endif
    atomic_store(&taken, 0);
    return 0;
}

size_t loupe_workers_started(void) { return started; }
