/* Which schedules run on which GPU (schedules/arch.h): every schedule declares its architectures,
 * the default build covers sm_80, sm_89 and sm_90, and a schedule refuses a GPU it or the build
 * does not cover with a reason naming both. The emulated device runs everything. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "convnd.h"
#include "registry.h"
#include "test_schedule_runs.h"

TestSuite(arch, .timeout = 60);

Test(arch, every_schedule_declares_its_architectures) {
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        cr_expect(s->min_sm >= 80 && s->min_sm <= 90, "%s: min_sm=%d", s->name, (int)s->min_sm);
        cr_expect(s->arch_needs && s->arch_needs[0], "%s: no arch_needs", s->name);
    }
}

Test(arch, default_build_covers_ampere_ada_hopper) {
    const char *def = convnd_default_cuda_archs();
    /* sm_86/87 run sm_80 SASS; sm_100 and sm_120 JIT the compute_90 PTX */
    static const int32_t covered[] = {80, 86, 87, 89, 90, 100, 120};
    char why[256];
    for (size_t k = 0; k < sizeof covered / sizeof covered[0]; ++k)
        cr_expect(convnd_build_runs_on(def, covered[k], why, sizeof why), "sm_%d with \"%s\": %s",
                  (int)covered[k], def, why);
    /* each schedule on every covered GPU at least as new as it declares (the Hopper tier: 9.0
     * up; its supports() also refuses GPUs other than 9.0), none on an older one */
    int32_t every_gpu = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        every_gpu += s->min_sm == 80;
        for (size_t k = 0; k < sizeof covered / sizeof covered[0]; ++k)
            cr_expect_eq(convnd_schedule_arch_ok(s, covered[k], def, why, sizeof why),
                         covered[k] >= s->min_sm, "%s (min_sm %d) on sm_%d: %s", s->name,
                         (int)s->min_sm, (int)covered[k], why);
    }
    cr_expect(every_gpu >= convnd_schedule_table_size - 1, "%d schedules run on sm_80",
              (int)every_gpu);
}

Test(arch, older_gpus_are_refused_with_a_reason) {
    const char *def = convnd_default_cuda_archs();
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        char why[256] = "";
        cr_expect_not(convnd_schedule_arch_ok(s, 75, def, why, sizeof why), "%s on sm_75", s->name);
        char needs[16];
        snprintf(needs, sizeof needs, "sm_%d", (int)s->min_sm);
        cr_expect(strstr(why, s->name) && strstr(why, "sm_75") && strstr(why, needs),
                  "%s: reason '%s' names neither the schedule, the GPU nor what it needs", s->name,
                  why);
    }
}

Test(arch, build_list_decides_what_a_gpu_can_load) {
    char why[256] = "";
    cr_expect(convnd_build_runs_on("80-real", 86, why, sizeof why), "sm_80 SASS runs on sm_86");
    cr_expect_not(convnd_build_runs_on("80-real", 90, why, sizeof why), "no PTX for sm_90");
    cr_expect(strstr(why, "sm_90") && strstr(why, "80-real"), "reason: %s", why);
    cr_expect(convnd_build_runs_on("80-virtual", 90, why, sizeof why), "compute_80 PTX JITs");
    cr_expect_not(convnd_build_runs_on("89-real", 86, why, sizeof why), "sm_89 SASS on sm_86");
    cr_expect_not(convnd_build_runs_on("90", 89, why, sizeof why), "sm_90 code on sm_89");
    cr_expect(convnd_build_runs_on("80-real;89-real;90", 89, why, sizeof why), "%s", why);
    cr_expect_not(convnd_build_runs_on("", 90, why, sizeof why), "an empty list runs nothing");
    /* a schedule the GPU is new enough for, on a build without code for that GPU */
    cr_expect_not(convnd_schedule_arch_ok(&convnd_schedule_igemm_tc, 80, "90", why, sizeof why));
    cr_expect(strstr(why, "igemm_tc") && strstr(why, "sm_80") && strstr(why, "CMAKE_CUDA_"),
              "reason: %s", why);
}

Test(arch, emulated_device_runs_every_schedule) {
    cr_assert(convnd_set_device(CONVND_DEVICE_EMULATED) == CONVND_OK);
    cr_expect_eq(convnd_device_sm(), 0);
    const convnd_problem p =
        test_parse_valid("fwd 2d N=1 Ci=8 Co=8 I=6,6 K=3,3 P0=1,1 P1=1,1 bf16 x=cl w=cl");
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        char why[256];
        cr_expect(convnd_schedule_arch_ok(s, 0, "", why, sizeof why), "%s: %s", s->name, why);
        const convnd_conv_params params = test_params_of(&p);
        for (int32_t c = 0; c < s->num_configs; ++c) {
            char a[512] = "", b[512] = "";
            cr_expect_eq(convnd_schedule_supports_here(s, &p, &params, c, a, sizeof a),
                         s->supports(&params, c, b, sizeof b), "%s:%d", s->name, (int)c);
        }
    }
}
