/* convnd_plan_explain: one line per schedule:configuration in planner order with the verdict the
 * planner itself gets, the chosen one marked, and the choice equal to convnd_plan_name's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "test_schedule_runs.h"

static char *explain(const convnd_problem *p, const convnd_options *opts) {
    size_t needed = 0;
    cr_assert_eq(convnd_plan_explain(p, opts, NULL, 0, &needed), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert_gt(needed, 1);
    char *text = malloc(needed);
    cr_assert_not_null(text);
    cr_assert_eq(convnd_plan_explain(p, opts, text, needed, NULL), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert_eq(strlen(text) + 1, needed);
    return text;
}

static int count_lines(const char *text, const char *needle) {
    int n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        const size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        if (!needle || strstr(buf, needle)) ++n;
        line += len + (end ? 1 : 0);
    }
    return n;
}

/* Every schedule:config has its line, in registry order, and the chosen one is the plan's. */
static void expect_explains(const char *problem_text, const char *expect_schedule) {
    const convnd_problem p = test_parse_valid(problem_text);
    char *text = explain(&p, NULL);
    int configs = 0;
    for (int32_t i = 0; i < convnd_schedule_count(); ++i)
        configs += convnd_schedule_config_count(i);
    cr_expect_eq(count_lines(text, NULL), configs + 1, "%s:\n%s", problem_text, text);
    cr_expect_eq(count_lines(text, "<- chosen"), 1, "%s:\n%s", problem_text, text);
    /* each verdict is one of three, a refusal with its reason */
    cr_expect_eq(count_lines(text, "refuses: ") + count_lines(text, "supports, worth routing") +
                     count_lines(text, "supports, not worth routing"),
                 configs, "%s:\n%s", problem_text, text);
    cr_expect_eq(count_lines(text, "refuses: \n"), 0);
    char name[128];
    cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK);
    name[strcspn(name, " ")] = '\0';
    char chosen[160];
    snprintf(chosen, sizeof chosen, "chosen: %s (", name);
    cr_expect(strstr(text, chosen), "%s: plan_name says %s:\n%s", problem_text, name, text);
    cr_expect(strncmp(name, expect_schedule, strlen(expect_schedule)) == 0, "%s: %s", problem_text,
              name);
    /* the marked line is that schedule:config's */
    const char *mark = strstr(text, "<- chosen");
    cr_assert_not_null(mark);
    const char *line = mark;
    while (line > text && line[-1] != '\n')
        --line;
    cr_expect(strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' ', "%.*s vs %s",
              (int)(mark - line), line, name);
    /* these problems are routed: the chosen line is the first worth routing */
    const char *first_worth = strstr(text, "supports, worth routing");
    cr_expect(first_worth && first_worth > line && first_worth < mark, "%s:\n%s", problem_text,
              text);
    free(text);
}

Test(explain, gemm_shaped_problem_routes_to_an_implicit_gemm) {
    expect_explains("fwd 2d N=2 Ci=64 Co=64 I=14,14 K=3 P0=1 P1=1 bf16 x=cl w=cl", "igemm_tc:");
}

Test(explain, depthwise_problem_routes_to_depthwise) {
    expect_explains("fwd 2d N=1 Ci=32 Co=32 g=32 I=9,9 K=7 P0=3 P1=3 f32 x=cl w=cl", "depthwise:");
}

Test(explain, weight_gradient_problem) {
    expect_explains("wg 2d N=2 Ci=8 Co=16 I=6,6 K=3 P0=1 P1=1", "wgrad_");
}

Test(explain, a_forced_schedule_is_said_so) {
    const convnd_problem p = test_parse_valid("fwd 2d N=1 Ci=16 Co=16 I=8,8 K=3 bf16");
    const convnd_options opts = {.schedule = "direct"};
    char *text = explain(&p, &opts);
    cr_expect(strstr(text, "chosen: direct:") && strstr(text, "forced by convnd_options.schedule"),
              "%s", text);
    free(text);
}

Test(explain, short_buffer_and_bad_problem) {
    const convnd_problem p = test_parse_valid("fwd 1d Ci=4 Co=4 I=16 K=3");
    size_t needed = 0;
    cr_assert_eq(convnd_plan_explain(&p, NULL, NULL, 0, &needed), CONVND_OK);
    char *buf = malloc(needed);
    memset(buf, 'x', needed);
    cr_expect_eq(convnd_plan_explain(&p, NULL, buf, needed - 1, NULL), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "too small"), "%s", convnd_last_error());
    cr_expect_eq(buf[needed - 2], '\0', "not terminated within len");
    cr_expect_eq(buf[needed - 1], 'x', "wrote past len");
    free(buf);
    cr_expect_eq(convnd_plan_explain(&p, NULL, NULL, 8, NULL), CONVND_ERR_NULL_POINTER);

    convnd_problem bad = p;
    bad.groups = 3;
    char text[64];
    cr_expect_eq(convnd_plan_explain(&bad, NULL, text, sizeof text, NULL),
                 CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "groups=3"), "%s", convnd_last_error());
}
