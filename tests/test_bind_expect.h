/* Assertions shared by the bind/ test suites: a call's status AND its per-thread message,
 * which must name the offending parameter and values. */
#ifndef CONVND_TEST_BIND_EXPECT_H
#define CONVND_TEST_BIND_EXPECT_H

#include <criterion/criterion.h>
#include <string.h>

#include "convnd.h"
#include "error.h"

/* expect_status(call, CONVND_ERR_..., "needle", ...): the call fails with that status and the
 * message contains every needle. */
#define expect_status(call, want, ...)                                                             \
    do {                                                                                           \
        convnd_clear_error();                                                                      \
        const convnd_status got_ = (call);                                                         \
        cr_assert_eq(got_, (want), "%s: status %d (%s), want %d (%s); message: \"%s\"", #call,     \
                     (int)got_, convnd_status_string(got_), (int)(want),                           \
                     convnd_status_string(want), convnd_last_error());                             \
        const char *needles_[] = {__VA_ARGS__};                                                    \
        for (size_t i_ = 0; i_ < sizeof needles_ / sizeof needles_[0]; ++i_)                       \
            cr_assert(strstr(convnd_last_error(), needles_[i_]) != NULL,                           \
                      "%s: message \"%s\" does not contain \"%s\"", #call, convnd_last_error(),    \
                      needles_[i_]);                                                               \
    } while (0)

#define expect_ok(call)                                                                            \
    do {                                                                                           \
        convnd_clear_error();                                                                      \
        const convnd_status got_ = (call);                                                         \
        cr_assert_eq(got_, CONVND_OK, "%s: status %d (%s): \"%s\"", #call, (int)got_,              \
                     convnd_status_string(got_), convnd_last_error());                             \
    } while (0)

/* The spatial geometry of a bound problem, dim by dim. */
#define expect_dims(p, field, ...)                                                                 \
    do {                                                                                           \
        const int64_t want_[] = {__VA_ARGS__};                                                     \
        const int n_ = (int)(sizeof want_ / sizeof want_[0]);                                      \
        cr_assert_eq((p).dims, n_, #field ": dims %d, want %d", (int)(p).dims, n_);                \
        for (int t_ = 0; t_ < n_; ++t_)                                                            \
            cr_assert_eq((p).field[t_], want_[t_], #field "[%d] = %lld, want %lld", t_,            \
                         (long long)(p).field[t_], (long long)want_[t_]);                          \
    } while (0)

#endif
