/* convnd_plan_explain: the planner's reasoning for one problem as text, from the same questions
 * the planner asks (each schedule's supports() through convnd_schedule_supports_here, then its
 * worth_routing()), so the routing policy is documented by the code, not by a prose table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "error.h"
#include "plan.h"
#include "planner.h"

/* Appends to buf like snprintf, keeping count of the whole text's length in *used. */
typedef struct text_out {
    char *buf;
    size_t len, used;
} text_out;

CONVND_PRINTF(2, 3)
static void put(text_out *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = t->used < t->len ? t->len - t->used : 0;
    const int n = vsnprintf(room ? t->buf + t->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->used += (size_t)n;
}

convnd_status convnd_plan_explain(const convnd_problem *p, const convnd_options *opts, char *buf,
                                  size_t len, size_t *needed) {
    if (!buf && len) return convnd_error(CONVND_ERR_NULL_POINTER, "buf is NULL with len=%zu", len);
    if (buf && len) buf[0] = '\0';
    convnd_plan_t plan;
    convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    /* the heuristic's choice as conv_nd makes it, autotune left out (it would time) */
    convnd_options no_tune = opts ? *opts : (convnd_options){0};
    no_tune.autotune = 0;
    st = convnd_plan_choose(&plan, &no_tune, NULL);
    if (st != CONVND_OK) return st;

    text_out t = {buf, len, 0};
    char reason[512];
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            const int chosen = plan.choice.schedule == i && plan.choice.config == c;
            char name[96];
            snprintf(name, sizeof name, "%s:%s", s->name, s->config_names[c]);
            put(&t, "%-30s ", name);
            reason[0] = '\0';
            if (!convnd_schedule_supports_here(s, &plan.resolved.problem, &plan.resolved.params, c,
                                               reason, sizeof reason))
                put(&t, "refuses: %s", reason);
            else if (s->worth_routing && s->worth_routing(&plan.resolved.params, c))
                put(&t, "supports, worth routing");
            else
                put(&t, "supports, not worth routing");
            put(&t, "%s\n", chosen ? "   <- chosen" : "");
        }
    }
    char chosen[384]; /* "schedule:config (how it was chosen)", as convnd_plan_describe says it */
    st = convnd_plan_text(&plan, 1, chosen, sizeof chosen, "chosen");
    if (st != CONVND_OK) return st;
    put(&t, "chosen: %s\n", chosen);
    if (needed) *needed = t.used + 1;
    if (!buf) return CONVND_OK; /* a size query */
    if (t.used >= len) {
        if (len) buf[len - 1] = '\0';
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "len=%zu is too small for the explanation (%zu bytes)", len,
                            t.used + 1);
    }
    return CONVND_OK;
}
