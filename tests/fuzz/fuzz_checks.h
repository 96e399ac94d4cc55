/* The fuzz target's checks of one problem along the whole host path: validation against the
 * independent size model, shapes and strides, output sizes, FLOPs and bytes, the kernels'
 * params, every schedule's supports/worth_routing/workspace_size, the planner, and conv_nd's
 * pointer, schedule and workspace checks (with fake pointers, only where the call must fail
 * before touching memory). Every broken expectation prints what broke and aborts. */
#ifndef CONVND_FUZZ_CHECKS_H
#define CONVND_FUZZ_CHECKS_H

#include "convnd.h"
#include "fuzz_input.h"

/* Prints the message and the problem (may be NULL) and aborts: a finding. */
void fuzz_fail(const convnd_problem *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#define FUZZ_CHECK(p, cond, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) fuzz_fail(p, "check failed: " #cond "\n  " __VA_ARGS__);                      \
    } while (0)

/* An error status must be a known one and come with a message (callers clear the message
 * before the call, so a stale one does not count). */
void fuzz_expect_message(const convnd_problem *p, convnd_status st, const char *call);

/* Runs every check above on p (any bytes: valid or not); reads scenario choices from in. */
void fuzz_exercise_problem(const convnd_problem *p, fuzz_input *in);

#endif
