/* The tensor-core register epilogue (families/igemm/tc_epilogue.cuh) of igemm_tc and convT_tc, on every
 * configuration: every activation (a template parameter there) x every dtype the schedules run
 * (f16, bf16, f32 with TF32) x y's layouts, against the CPU reference in every thread order:
 *   - channels-last y, packed: every 8-channel run is 16-byte aligned, stored with 16-byte
 *     vector stores;
 *   - channels-last y in a channel slice of a wider buffer (28 channels): half the rows (16-bit)
 *     misaligned, which must take the per-element path, and a channel tail (20 of 24) whose gap
 *     channels must stay untouched; z in place (z == y);
 *   - channels-first y: per-element stores;
 *   - channels-last y one element past a 16-byte boundary: per-element stores throughout.
 * On the emulated device, the count of 16-byte global stores of each run
 * (convnd_emu_global_vector_stores16) must equal the number of whole, aligned 8-channel runs of
 * y (two stores each for f32): the wide path is taken exactly where it may be. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "emu.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

/* y's layouts: the problem text's tail for forward and transposed problems. The slice: channels
 * [0, 20) of 28 per pixel (strides filled in by with_slice). */
enum { Y_CL, Y_CL_SLICE, Y_CF, Y_CL_MISALIGNED, Y_LAYOUTS };
static const char *const layout_names[Y_LAYOUTS] = {"y=cl", "y=cl slice of 28 channels, z == y",
                                                    "y=cf", "y=cl one element misaligned"};

static const char *const fwd_base = "fwd 2d N=2 Ci=16 Co=%d I=5,6 K=3 P0=1 P1=1 x=cl w=cl bias";
static const char *const tr_base = "tr 2d N=2 Ci=16 Co=%d I=3,4 K=3 S=2 P0=1 P1=0 x=cl w=cl bias";
static const char *const acts[] = {"", " act=relu", " act=silu", " act=gelu"};
#define SLICE_CHANNELS 28

/* The problem of one case: dtype and math from num; y's layout and view per `layout`. */
static convnd_problem case_problem(int transposed, int layout, int act, test_numerics num) {
    char text[256];
    const int co = layout == Y_CL_SLICE ? 20 : 24;
    snprintf(text, sizeof text, transposed ? tr_base : fwd_base, co);
    strncat(text, layout == Y_CF ? " y=cf" : " y=cl", sizeof text - strlen(text) - 1);
    strncat(text, layout == Y_CL_SLICE ? " z beta=1" : " z beta=0.5",
            sizeof text - strlen(text) - 1);
    strncat(text, acts[act], sizeof text - strlen(text) - 1);
    convnd_problem p = test_parse_valid(text);
    p.dtype = num.dtype;
    p.math = num.math;
    if (layout == Y_CL_SLICE) {
        /* [N, O0, O1, 28] channels-last buffer, y its first 20 channels */
        int64_t o[CONVND_MAX_DIMS];
        cr_assert(convnd_output_size(&p, o) == CONVND_OK);
        p.y_view.custom = 1;
        p.y_view.strides[0] = o[0] * o[1] * SLICE_CHANNELS;
        p.y_view.strides[1] = 1;
        p.y_view.strides[2] = o[1] * SLICE_CHANNELS;
        p.y_view.strides[3] = SLICE_CHANNELS;
        p.y_view.extent = 0;
    }
    return p;
}

/* The 16-byte stores the epilogue should issue for y at y_base (z at z_base when read): one per
 * whole, aligned run of 8 channels starting at a multiple of 8 (two for f32), none when y's
 * channels are not innermost. Groups: 1. */
static uint64_t expected_wide_stores(const test_conv_case *c, const void *y_base,
                                     const void *z_base) {
    const convnd_tensor_desc *d = &c->yd;
    if (d->strides[1] != 1) return 0;
    const int reads_z = c->p.has_z && c->p.beta != 0.0f;
    const int64_t cout = d->shape[1];
    int64_t pixels = d->shape[0];
    for (int i = 2; i < d->rank; ++i)
        pixels *= d->shape[i];
    uint64_t n = 0;
    for (int64_t px = 0; px < pixels; ++px) {
        /* px's coordinates, innermost spatial dimension fastest, and its row offset */
        int64_t rest = px, off = 0;
        for (int i = d->rank - 1; i >= 2; --i) {
            off += (rest % d->shape[i]) * d->strides[i];
            rest /= d->shape[i];
        }
        off += rest * d->strides[0];
        for (int64_t k = 0; (k + 1) * 8 <= cout; ++k) {
            const uintptr_t yb = (uintptr_t)y_base + (uintptr_t)((off + 8 * k) * (int64_t)c->esize);
            const uintptr_t zb = (uintptr_t)z_base + (uintptr_t)((off + 8 * k) * (int64_t)c->esize);
            if (yb % 16 == 0 && (!reads_z || zb % 16 == 0)) n += c->esize == 4 ? 2 : 1;
        }
    }
    return n;
}

/* One case in every thread order: the result against the reference, and on the emulated device
 * the run's 16-byte global stores against expected_wide_stores. */
static void run_case(const char *spec, int transposed, int layout, int act, test_numerics num) {
    convnd_problem p = case_problem(transposed, layout, act, num);
    char text[512], reason[512], err[512];
    convnd_problem_format(text, sizeof text, &p);
    if (!convnd_schedule_supports(spec, &p, reason, sizeof reason)) {
        /* the 64-deep 4-stage tiles are not built for f32 (too much shared memory) */
        cr_assert(p.dtype == CONVND_F32 && strstr(reason, "shared memory"), "%s refuses %s: %s",
                  spec, text, reason);
        return;
    }
    test_conv_case c;
    const int in_place = layout == Y_CL_SLICE;
    cr_assert(test_case_init(&c, &p, in_place, test_seed_of(text, 13), err, sizeof err), "%s: %s",
              text, err);
    void *ybuf = NULL, *const dy = c.dy;
    if (layout == Y_CL_MISALIGNED) {
        c.dy = test_upload_misaligned(NULL, c.y_span, c.esize, &ybuf);
        cr_assert(c.dy, "device allocation failed");
    }
    const int emulated = convnd_active_device() == CONVND_DEVICE_EMULATED;
    const uint64_t expect = expected_wide_stores(&c, c.dy, in_place ? c.dy : c.dz);
    if (layout == Y_CL || (layout == Y_CL_SLICE && c.esize == 2))
        cr_assert(expect > 0, "the case meant for 16-byte stores has none: %s", text);
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        const uint64_t before = emulated ? convnd_emu_global_vector_stores16() : 0;
        const convnd_status st = test_case_run(&c, spec);
        const uint64_t wide = emulated ? convnd_emu_global_vector_stores16() - before : 0;
        char msg[1024] = "";
        const int ok = st == CONVND_OK && test_case_check(&c, msg, sizeof msg);
        cr_expect(ok, "%s, %s (order %s): %s%s\n  problem: %s", spec, layout_names[layout],
                  test_order_name(order), st == CONVND_OK ? "" : convnd_status_string(st),
                  st == CONVND_OK ? msg : convnd_last_error(), text);
        if (emulated)
            cr_expect(wide == expect,
                      "%s, %s (order %s): %llu 16-byte stores, expected %llu\n  problem: %s", spec,
                      layout_names[layout], test_order_name(order), (unsigned long long)wide,
                      (unsigned long long)expect, text);
    }
    c.dy = dy;
    convnd_free(ybuf);
    test_case_free(&c);
}

#define MAX_TC_CONFIGS 32
static test_schedule_config tc_configs[MAX_TC_CONFIGS];

static size_t list_tc_configs(void) {
    size_t n = test_list_schedule_configs("igemm_tc", tc_configs, MAX_TC_CONFIGS);
    n += test_list_schedule_configs("convT_tc", tc_configs + n, MAX_TC_CONFIGS - n);
    return n;
}

TestSuite(tc_epilogue, .timeout = 600);

ParameterizedTestParameters(tc_epilogue, activations_dtypes_layouts) {
    return cr_make_param_array(test_schedule_config, tc_configs, list_tc_configs());
}

ParameterizedTest(test_schedule_config *sc, tc_epilogue, activations_dtypes_layouts) {
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    const int transposed = strncmp(spec, "convT_", 6) == 0;
    size_t nnum;
    const test_numerics *num = test_numerics_of(*sc, &nnum);
    for (size_t k = 0; k < nnum; ++k)
        for (int layout = 0; layout < Y_LAYOUTS; ++layout)
            for (int act = 0; act < 4; ++act)
                run_case(spec, transposed, layout, act, num[k]);
}
