/* Fiber switching. Built with -U_FORTIFY_SOURCE (device/CMakeLists.txt): the fortified longjmp
 * (__longjmp_chk) aborts when it jumps to another stack. */
#define _GNU_SOURCE
#include "emu_fiber.h"

#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CONVND_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONVND_EMU_ASAN 1
#endif
#endif

#ifdef CONVND_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define START_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define FINISH_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif

/* ThreadSanitizer: each fiber is a TSan fiber, and every switch is announced just before it
 * (with synchronisation: the fibers of one worker run one at a time). Without this TSan takes
 * the jump to another stack for one thread's stack growing wildly, and its setjmp/longjmp
 * bookkeeping loses the buffers. */
#if defined(__SANITIZE_THREAD__)
#define CONVND_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CONVND_EMU_TSAN 1
#endif
#endif
#ifdef CONVND_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#define TSAN_CREATE() __tsan_create_fiber(0)
#define TSAN_DESTROY(fiber) __tsan_destroy_fiber(fiber)
#define TSAN_CURRENT() __tsan_get_current_fiber()
#define TSAN_SWITCH(fiber) __tsan_switch_to_fiber(fiber, 0)
#else
#define TSAN_CREATE() ((void *)1)
#define TSAN_DESTROY(fiber) ((void)(fiber))
#define TSAN_CURRENT() ((void *)0)
#define TSAN_SWITCH(fiber) ((void)(fiber))
#endif

/* valgrind: a stack switch it was not told about looks like a huge stack change, and memcheck
 * then reports every access on the fiber's stack. The client requests cost nothing outside
 * valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CONVND_EMU_VALGRIND 1
#endif
#endif
#ifdef CONVND_EMU_VALGRIND
#define STACK_REGISTER(lo, hi) VALGRIND_STACK_REGISTER(lo, hi)
#define STACK_DEREGISTER(id) VALGRIND_STACK_DEREGISTER(id)
#else
#define STACK_REGISTER(lo, hi) ((void)(lo), (void)(hi), 0u)
#define STACK_DEREGISTER(id) ((void)(id))
#endif

struct convnd_emu_fiber {
    jmp_buf jb;
    ucontext_t start; /* used only for the first entry after create/restart */
    int started;
    void (*entry)(void *);
    void *arg;
    unsigned char *map; /* guard page + stack */
    size_t map_bytes, guard_bytes;
    void *asan_fake_stack;
    unsigned valgrind_stack_id;
    void *tsan_fiber;
};

/* The worker's own context, per host thread. */
static __thread jmp_buf worker_jb;
static __thread void *worker_fake_stack;
static __thread const void *worker_stack_bottom;
static __thread size_t worker_stack_size;
static __thread convnd_emu_fiber *starting_fiber;
static __thread void *worker_tsan_fiber;

size_t convnd_emu_fiber_stack_bytes(void) {
    const char *env = getenv("CONVND_EMU_STACK_KB");
    if (env && *env) {
        char *end;
        errno = 0;
        const unsigned long long kb = strtoull(env, &end, 10);
        if (errno || *end || *env == '-' || kb < 16 || kb > CONVND_EMU_MAX_STACK_KB) return 0;
        return (size_t)kb * 1024;
    }
#ifdef CONVND_EMU_ASAN
    return (size_t)1 << 20;
#else
    return (size_t)256 << 10;
#endif
}

static void fiber_main(void) {
    convnd_emu_fiber *f = starting_fiber;
    /* First entry: learn the worker's stack so yields can announce it. */
    FINISH_SWITCH(NULL, &worker_stack_bottom, &worker_stack_size);
    f->entry(f->arg);
    abort(); /* entry never returns */
}

static int prepare_start(convnd_emu_fiber *f) {
    if (getcontext(&f->start) != 0) return -1;
    f->start.uc_stack.ss_sp = f->map + f->guard_bytes;
    f->start.uc_stack.ss_size = f->map_bytes - f->guard_bytes;
    f->start.uc_link = NULL;
    makecontext(&f->start, fiber_main, 0);
    f->started = 0;
    return 0;
}

convnd_emu_fiber *convnd_emu_fiber_create(size_t stack_bytes, void (*entry)(void *), void *arg) {
    convnd_emu_fiber *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    stack_bytes = (stack_bytes + page - 1) / page * page;
    f->guard_bytes = page;
    f->map_bytes = stack_bytes + page;
    void *map = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        free(f);
        return NULL;
    }
    f->map = map;
    f->valgrind_stack_id = STACK_REGISTER(f->map + page, f->map + f->map_bytes);
    /* A stack overflow hits the guard page (SIGSEGV) instead of the neighbouring stack. */
    mprotect(f->map, page, PROT_NONE);
    f->entry = entry;
    f->arg = arg;
    f->tsan_fiber = TSAN_CREATE();
    if (!f->tsan_fiber || prepare_start(f) != 0) {
        convnd_emu_fiber_destroy(f);
        return NULL;
    }
    return f;
}

void convnd_emu_fiber_resume(convnd_emu_fiber *f) {
    if (_setjmp(worker_jb) == 0) {
        worker_tsan_fiber = TSAN_CURRENT();
        START_SWITCH(&worker_fake_stack, f->map + f->guard_bytes, f->map_bytes - f->guard_bytes);
        TSAN_SWITCH(f->tsan_fiber);
        if (!f->started) {
            f->started = 1;
            starting_fiber = f;
            setcontext(&f->start);
        }
        _longjmp(f->jb, 1);
    }
    FINISH_SWITCH(worker_fake_stack, NULL, NULL);
}

void convnd_emu_fiber_yield(convnd_emu_fiber *f) {
    if (_setjmp(f->jb) == 0) {
        START_SWITCH(&f->asan_fake_stack, worker_stack_bottom, worker_stack_size);
        TSAN_SWITCH(worker_tsan_fiber);
        _longjmp(worker_jb, 1);
    }
    FINISH_SWITCH(f->asan_fake_stack, &worker_stack_bottom, &worker_stack_size);
}

void convnd_emu_fiber_restart(convnd_emu_fiber *f) {
#ifdef CONVND_EMU_ASAN
    /* Redzones of the dropped frames would otherwise stay poisoned. */
    ASAN_UNPOISON_MEMORY_REGION(f->map + f->guard_bytes, f->map_bytes - f->guard_bytes);
#endif
    /* The dropped frames stay on the TSan fiber's shadow stack: a fresh one. */
    TSAN_DESTROY(f->tsan_fiber);
    f->tsan_fiber = TSAN_CREATE();
    if (!f->tsan_fiber || prepare_start(f) != 0) abort(); /* neither fails on Linux */
}

void convnd_emu_fiber_destroy(convnd_emu_fiber *f) {
    if (!f) return;
    if (f->map) {
        STACK_DEREGISTER(f->valgrind_stack_id);
        munmap(f->map, f->map_bytes);
    }
    if (f->tsan_fiber) TSAN_DESTROY(f->tsan_fiber);
    free(f);
}
