/* Differential libFuzzer target: kernels on the emulated device against the CPU reference
 * (tests/fuzz/run.sh builds and runs it under AddressSanitizer and UBSan).
 *
 * The input decodes to a small problem (every size bounded, so one input costs milliseconds):
 * the first byte below the feature table's size starts from that table case
 * (tests/support/test_feature_table.c, which also seeds the corpus), anything else decodes
 * every field from the following bytes. Two more bytes pick the emulator's thread order and
 * cp.async mode. Then the planner's choice and every schedule:config that supports the problem
 * run it (tests/support/test_conv_case.c: seeded inputs, poisoned y and workspace, exact-size
 * buffers whose ASan redzones are the guard bytes), and each result must match the reference
 * within the dtype's tolerance, every output written, and x, w, bias and z unchanged. Any
 * difference aborts: a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "fuzz_input.h"
#include "registry.h"
#include "test_conv_case.h"
#include "test_feature_table.h"
#include "test_problem_text.h"

/* Work bound per input: multiply-adds of the reference. A schedule may do more (a tensor-core
 * tile pads a small GEMM to 128 x 128), hence tests/fuzz/run.sh's long per-input timeout. */
#define MAX_MACS 20000

static void decode_problem(fuzz_input *in, convnd_problem *p) {
    convnd_problem_init(p, 1 + fuzz_byte(in) % 3);
    p->mode = (convnd_mode)(fuzz_byte(in) & 1);
    p->N = 1 + fuzz_byte(in) % 2;
    const uint8_t gsel = fuzz_byte(in);
    const int64_t cin_g = 1 + fuzz_byte(in) % 8, cout_g = 1 + fuzz_byte(in) % 8;
    const int64_t groups = 1 + gsel % 4;
    p->groups = groups;
    p->C_in = groups * cin_g;
    p->C_out = groups * cout_g;
    if (gsel & 0x80) { /* depthwise with a channel multiplier */
        p->groups = p->C_in = 1 + fuzz_byte(in) % 12;
        p->C_out = p->C_in * (1 + fuzz_byte(in) % 2);
    }
    for (int t = 0; t < p->dims; ++t) {
        p->input[t] = 1 + fuzz_byte(in) % 12;
        p->kernel[t] = 1 + fuzz_byte(in) % 5;
        p->stride[t] = 1 + fuzz_byte(in) % 3;
        p->dilation[t] = 1 + fuzz_byte(in) % 3;
        p->pad_before[t] = (int64_t)(fuzz_byte(in) % 6) - 2;
        p->pad_after[t] = (int64_t)(fuzz_byte(in) % 6) - 2;
    }
    p->dtype = (convnd_dtype)(fuzz_byte(in) % 3);
    p->x_layout = (convnd_layout)(fuzz_byte(in) & 1);
    p->w_layout = (convnd_layout)(fuzz_byte(in) & 1);
    p->y_layout = (convnd_layout)(fuzz_byte(in) % 3);
    p->has_bias = fuzz_flag(in);
    p->has_z = fuzz_flag(in);
    static const float alphas[] = {1.0f, 0.5f, -2.0f, 0.0f};
    p->alpha = alphas[fuzz_byte(in) % 4];
    p->beta = p->has_z ? alphas[fuzz_byte(in) % 4] : 0.0f;
    p->activation = (convnd_activation)(fuzz_byte(in) % 4);
    p->math = (convnd_math)(fuzz_byte(in) & 1);
}

static int64_t macs(const convnd_problem *p) {
    convnd_tensor_desc yd;
    if (convnd_tensor_describe(p, CONVND_Y, &yd) != CONVND_OK) return -1;
    int64_t taps = p->C_in / p->groups;
    for (int t = 0; t < p->dims; ++t)
        taps *= p->kernel[t];
    return yd.numel > MAX_MACS ? MAX_MACS + 1 : yd.numel * taps;
}

static void finding(const char *what, const char *spec, const convnd_problem *p, const char *msg) {
    char text[512];
    convnd_problem_format(text, sizeof text, p);
    fprintf(stderr, "fuzz_kernels: %s on %s\n  problem: %s\n  %s\n", what, spec ? spec : "planner",
            text, msg);
    abort();
}

/* Runs c on spec (NULL: the planner) and checks everything. */
static void run_one(test_conv_case *c, const char *spec) {
    const convnd_status st = test_case_run(c, spec);
    if (st != CONVND_OK) finding("conv_nd failed", spec, &c->p, convnd_last_error());
    char msg[512];
    if (!test_case_check(c, msg, sizeof msg)) finding("wrong result", spec, &c->p, msg);
    const struct {
        const void *dev, *host;
        int64_t n;
    } inputs[] = {{c->dx, c->hx, c->xd.numel},
                  {c->dw, c->hw, c->wd.numel},
                  {c->db, c->hb, c->p.has_bias ? c->bias_n : 0},
                  {c->dz, c->hz, c->p.has_z && !c->z_in_place ? c->yd.numel : 0}};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i)
        if (inputs[i].n > 0 &&
            memcmp(inputs[i].dev, inputs[i].host, (size_t)inputs[i].n * c->esize))
            finding("an input was modified", spec, &c->p, "x, w, bias or z changed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    convnd_problem p;
    const uint8_t first = fuzz_byte(&in);
    if (first < test_feature_table_count) {
        char err[128];
        if (!test_problem_parse(test_feature_table[first].problem, &p, err, sizeof err)) abort();
    } else {
        decode_problem(&in, &p);
    }
    static const convnd_emu_order orders[] = {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE,
                                              CONVND_EMU_SHUFFLE, CONVND_EMU_WARP_AHEAD};
    const uint8_t mode = fuzz_byte(&in);
    convnd_emu_set_order(orders[mode & 3], mode);
    convnd_emu_set_copies((convnd_emu_copies)((mode >> 2) % 3), mode);
    if (convnd_validate(&p) != CONVND_OK) return 0;
    const int64_t work = macs(&p);
    if (work < 0 || work > MAX_MACS) return 0;

    test_conv_case c;
    char err[256];
    if (!test_case_init(&c, &p, 0, (uint64_t)size * 0x9E3779B97F4A7C15ull ^ mode, err, sizeof err))
        finding("setup failed", NULL, &p, err);
    run_one(&c, NULL);
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t k = 0; k < s->num_configs; ++k) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[k]);
            if (convnd_schedule_supports(spec, &c.p, NULL, 0)) run_one(&c, spec);
        }
    }
    test_case_free(&c);
    return 0;
}
