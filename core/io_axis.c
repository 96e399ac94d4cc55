/* SPEC §12 and §14: a prefix and a suffix input and a state output along one spatial axis. The
 * conv reads the logical input X = cat(x_prefix, x, x_suffix) of size prefix_size + I +
 * suffix_size on that axis. */
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>

convnd_status convnd_check_io_axis(const convnd_problem *p, convnd_problem_sizes *s) {
    for (int t = 0; t < CONVND_MAX_DIMS; ++t)
        s->in[t] = t < p->dims ? p->input[t] : 1;
    const struct {
        const char *name;
        int64_t value;
    } sizes[3] = {{"prefix_size", p->prefix_size},
                  {"suffix_size", p->suffix_size},
                  {"state_size", p->state_size}};
    for (int i = 0; i < 3; ++i)
        if (sizes[i].value < 0)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s=%" PRId64 " must be >= 0",
                                sizes[i].name, sizes[i].value);
    if (!convnd_has_io_axis(p)) return CONVND_OK;
    if (p->io_axis < 0 || p->io_axis >= p->dims)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "io_axis=%d must name a spatial dim 0..%d (prefix_size=%" PRId64
                            ", suffix_size=%" PRId64 ", state_size=%" PRId64 ")",
                            (int)p->io_axis, (int)p->dims - 1, p->prefix_size, p->suffix_size,
                            p->state_size);
    if (p->mode != CONVND_FORWARD)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "prefix_size=%" PRId64 ", suffix_size=%" PRId64 ", state_size=%" PRId64
                            " need mode=forward (mode=%s)",
                            p->prefix_size, p->suffix_size, p->state_size,
                            convnd_mode_name(p->mode));
    const int a = p->io_axis;
    if (convnd_add_overflows(p->input[a], p->prefix_size, &s->in[a]) ||
        convnd_add_overflows(s->in[a], p->suffix_size, &s->in[a]))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "input[%d]=%" PRId64 " + prefix_size=%" PRId64 " + suffix_size=%" PRId64
                            " overflows int64",
                            a, p->input[a], p->prefix_size, p->suffix_size);
    return CONVND_OK;
}
