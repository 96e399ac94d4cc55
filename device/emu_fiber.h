/* Fibers for the emulated device's block threads. Each fiber gets its stack and entry once
 * (makecontext); every switch after that is _setjmp/_longjmp (no syscall, ~10 ns; swapcontext
 * would make a sigprocmask syscall per switch). A fiber is only ever resumed by, and yields back
 * to, the host thread that owns it (its worker), so the scheduler runs on the worker's own stack.
 * Switches are annotated for AddressSanitizer. */
#ifndef CONVND_EMU_FIBER_H
#define CONVND_EMU_FIBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_emu_fiber convnd_emu_fiber;

/* A fiber that will run entry(arg) when first resumed; entry must never return (it loops,
 * yielding). NULL when out of memory. */
convnd_emu_fiber *convnd_emu_fiber_create(size_t stack_bytes, void (*entry)(void *), void *arg);
/* From the worker: run f until it yields. */
void convnd_emu_fiber_resume(convnd_emu_fiber *f);
/* From inside f: return to the worker; returns when resumed again. */
void convnd_emu_fiber_yield(convnd_emu_fiber *f);
/* Abandon whatever f was doing (frames on its stack are dropped); the next resume starts entry
 * afresh. Only for a fiber that is suspended. */
void convnd_emu_fiber_restart(convnd_emu_fiber *f);
void convnd_emu_fiber_destroy(convnd_emu_fiber *f);
/* Stack size for block threads: 256 KiB (1 MiB under AddressSanitizer), or CONVND_EMU_STACK_KB
 * in [16, CONVND_EMU_MAX_STACK_KB]; 0 when that variable is set to anything else. Only the
 * touched pages cost memory. */
#define CONVND_EMU_MAX_STACK_KB (1024u * 1024u) /* 1 GiB */
size_t convnd_emu_fiber_stack_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
