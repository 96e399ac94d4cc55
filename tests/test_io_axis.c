/* A prefix and a suffix input and a state output along one spatial axis (SPEC §12, §14), on
 * every schedule that reads them: y against the reference conv over the explicit X =
 * cat(x_prefix, x, x_suffix), the state bit for bit against X's last positions, in every thread
 * order, y and the state poisoned first; chunked runs with the carried state equal the whole run
 * bit for bit (conv1d, and the time axis of a causal conv3d); sharded runs with their halos
 * equal the whole run bit for bit (SPEC §14's identity, convnd_shard_rows); the causal-cache
 * binding; every other schedule declines; bad prefixes, suffixes, states and pointers are
 * refused with nothing written. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_schedule_runs.h"

static const test_case_text io_cases[] = {
    /* causal conv1d chunk: 3 cached steps, the next chunk's 3 written */
    {"conv1d_cache", "fwd 1d N=2 Ci=4 Co=4 g=4 I=7 K=4 P0=0 bias act=silu axis=0 pre=3 st=3", 0},
    {"conv1d_cache_cl", "fwd 1d N=2 Ci=5 Co=3 I=6 K=3 D=2 P0=1 bf16 x=cl axis=0 pre=3 st=4", 0},
    /* Wan-style causal conv3d: 2 cached frames, padding 1 in H and W */
    {"conv3d_time_cache",
     "fwd 3d N=1 Ci=3 Co=4 I=3,4,5 K=3 P0=0,1,1 P1=0,1,1 bias axis=0 pre=2 st=2", 0},
    {"conv3d_time_cache_cl",
     "fwd 3d N=1 Ci=3 Co=2 I=2,3,4 K=3,3,2 P0=0,1,0 P1=0,1,1 f16 x=cl z beta=0.5 axis=0 pre=2 st=2",
     1},
    /* prefix along a non-leading axis, strided conv, a state longer than X (zeros in front) */
    {"conv2d_width_prefix", "fwd 2d N=2 Ci=3 Co=2 I=4,5 K=2,3 S=1,2 P0=1,0 axis=1 pre=2 st=9", 0},
    /* a state without a prefix, and a prefix without a state */
    {"state_only", "fwd 2d N=1 Ci=2 Co=3 I=5,4 K=3 P0=2,1 P1=0,1 axis=0 st=2", 0},
    {"prefix_only", "fwd 1d N=3 Ci=2 Co=2 I=5 K=3 D=2 P0=1 axis=0 pre=3", 0},
    /* x itself a view (a channel slice of a [2, 6, 7] buffer) behind the prefix */
    {"prefix_and_x_view", "fwd 1d N=2 Ci=4 Co=4 I=7 K=3 axis=0 pre=2 st=2 xs=42,7,1", 0},
    /* GEMM-shaped (the implicit GEMMs' prefix kernel): channels-last in whole 16-byte chunks
     * (the vector path), the prefix/x boundary inside tiles and inside a tap's window */
    {"gemm_conv3d_time_f16_cl",
     "fwd 3d N=1 Ci=16 Co=24 I=3,4,5 K=3 P0=0,1,1 P1=0,1,1 f16 x=cl w=cl bias axis=0 pre=2 st=2",
     0},
    {"gemm_conv2d_tf32_cl_s2",
     "fwd 2d N=2 Ci=8 Co=12 I=5,6 K=3 S=2,1 P0=0,1 P1=0,1 tf32 x=cl w=cl axis=0 pre=3 st=4", 0},
    {"gemm_width_prefix_f32_cl",
     "fwd 2d N=2 Ci=8 Co=8 I=4,5 K=3 D=1,2 P0=1,0 x=cl w=cl bias act=relu axis=1 pre=3 st=7", 0},
    {"gemm_pointwise_bf16_cl", "fwd 3d N=2 Ci=8 Co=16 I=2,3,3 K=1 bf16 x=cl w=cl axis=0 pre=1 st=3",
     0},
    {"gemm_in_place_bf16_cl",
     "fwd 1d N=3 Ci=16 Co=16 I=9 K=4 P0=0 bf16 x=cl w=cl bias z beta=1 axis=0 pre=3 st=3", 1},
    /* the vector path's tap masks: a negative leading pad with dilation (taps that start
     * inside the prefix), a width prefix with dilation and padding on the other axis */
    {"gemm_neg_pad_dilated_f16_cl",
     "fwd 1d N=2 Ci=16 Co=8 I=6 K=3 D=2 P0=-1 P1=2 f16 x=cl w=cl axis=0 pre=4 st=2", 0},
    {"gemm_width_prefix_dilated_bf16_cl",
     "fwd 2d N=2 Ci=16 Co=16 I=5,6 K=3 D=1,2 P0=1,2 P1=1,0 bf16 x=cl w=cl bias axis=1 pre=4 st=3",
     0},
    /* the gather path: odd channel counts, channels-first, mixed layouts */
    {"gemm_odd_channels_bf16_cl",
     "fwd 1d N=2 Ci=10 Co=9 I=9 K=3 P0=1 bf16 x=cl w=cl axis=0 pre=2 st=2", 0},
    {"gemm_cf_conv3d_time_tf32",
     "fwd 3d N=2 Ci=8 Co=8 I=2,3,4 K=3 P0=1,1,1 P1=0,1,1 tf32 bias axis=0 pre=2 st=3", 0},
    {"gemm_cf_groups_f32", "fwd 2d N=1 Ci=16 Co=16 g=2 I=5,4 K=3 P0=1 P1=1 axis=1 pre=2 st=2", 0},
    {"gemm_x_cl_w_cf_f16",
     "fwd 2d N=2 Ci=8 Co=8 I=3,4 K=2,3 P0=0,1 P1=1,1 f16 x=cl w=cf axis=0 pre=2", 0},
    /* a state far larger than one column of blocks covers, over a grid of 2 column blocks
     * (BN = 64) and 2 groups: every block writes its share */
    {"gemm_wide_state_bf16_cl",
     "fwd 1d N=4 Ci=32 Co=160 g=2 I=6 K=3 P0=2 bf16 x=cl w=cl axis=0 pre=2 st=40", 0},
    {"gemm_wide_state_f32_cl", "fwd 1d N=4 Ci=16 Co=80 I=6 K=3 P0=2 x=cl w=cl axis=0 pre=2 st=40",
     0},
    /* a state only, on the GEMM shapes; a state longer than X */
    {"gemm_state_only_f16_cl", "fwd 2d N=1 Ci=8 Co=8 I=4,5 K=3 P0=1 P1=1 f16 x=cl w=cl axis=0 st=6",
     0},
    /* SPEC §14: halos on both sides (a shard's view of its neighbours' rows), a suffix alone, a
     * suffix with a state (the state then ends inside the suffix), cropping pads */
    {"halo_both_1d", "fwd 1d N=2 Ci=3 Co=2 I=5 K=3 D=2 axis=0 pre=2 suf=3", 0},
    {"suffix_only_2d_width", "fwd 2d N=1 Ci=2 Co=3 I=4,3 K=3 S=1,2 P0=1,-1 P1=0,-1 axis=1 suf=4",
     0},
    {"suffix_state_1d", "fwd 1d N=2 Ci=2 Co=2 I=4 K=3 P0=0 axis=0 pre=1 st=3 suf=2", 0},
    {"gemm_halo_conv2d_f16_cl",
     "fwd 2d N=2 Ci=16 Co=24 I=3,5 K=3 S=2,1 P0=-1,1 P1=0,1 f16 x=cl w=cl bias axis=0 pre=2 suf=3",
     0},
    {"gemm_halo_width_dilated_f32_cl",
     "fwd 2d N=1 Ci=8 Co=8 I=4,3 K=3 D=1,2 P0=1,0 P1=1,-1 x=cl w=cl axis=1 pre=1 suf=4", 0},
    {"gemm_suffix_conv3d_bf16_cl",
     "fwd 3d N=1 Ci=16 Co=16 I=3,3,4 K=3 P0=0,1,1 P1=0,1,1 bf16 x=cl w=cl axis=1 suf=2 st=2", 0},
    {"gemm_halo_cf_tf32", "fwd 2d N=2 Ci=8 Co=8 I=3,4 K=3 P0=1 P1=-1 tf32 bias axis=0 pre=1 suf=2",
     0},
    {"gemm_halo_odd_channels_bf16_cl",
     "fwd 1d N=2 Ci=10 Co=9 I=4 K=5 P0=1 P1=2 bf16 x=cl w=cl axis=0 pre=3 suf=5", 0},
    /* the prefix and suffix as views (SPEC §14): rows of bigger buffers with a padded pitch, a
     * channel slice of a wider channels-last buffer (the vector path when its strides allow) */
    {"halo_views_cf",
     "fwd 2d N=2 Ci=3 Co=2 I=4,5 K=3 P0=1 P1=1 axis=0 pre=1 suf=2 "
     "ps=48,16,8,1 fs=60,20,8,1",
     0},
    {"gemm_halo_views_f16_cl",
     "fwd 2d N=1 Ci=16 Co=16 I=3,4 K=3 P0=1 P1=1 f16 x=cl w=cl axis=0 pre=1 suf=2 "
     "ps=256,1,128,32 fs=256,1,128,32",
     0},
};
#define IO_CASES (sizeof io_cases / sizeof io_cases[0])

/* A host tensor of n elements uploaded to the device, one element past a 16-byte boundary when
 * misalign (vector paths must fall back to element loads); *buffer is what to free. */
static void *upload_maybe_misaligned(convnd_dtype dt, const void *h, int64_t n, int misalign,
                                     void **buffer) {
    const size_t es = convnd_ref_dtype_size(dt);
    if (!misalign) return *buffer = test_device_upload(dt, h, n);
    void *shifted = calloc((size_t)n + 1, es);
    cr_assert(shifted);
    memcpy((char *)shifted + es, h, es * (size_t)n);
    *buffer = test_device_upload(dt, shifted, n + 1);
    free(shifted);
    return *buffer ? (char *)*buffer + es : NULL;
}

/* Runs p (with its prefix/suffix/state) on spec in every thread order: y against the reference
 * over the explicit X, the state bit for bit. */
static void run_io_case(const char *spec, const char *id, const convnd_problem *p, int z_in_place,
                        uint64_t seed, int misalign_prefix) {
    char text[512], err[512];
    convnd_problem_format(text, sizeof text, p);
    convnd_tensor_desc xd, pd, fd, sd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X, &xd), CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X_PREFIX, &pd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X_SUFFIX, &fd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_STATE, &sd), CONVND_OK);
    const size_t es = convnd_ref_dtype_size(p->dtype);
    const int64_t x_span = xd.bytes / (int64_t)es;
    /* the prefix and suffix from their bases to their last elements (views: SPEC §14) */
    const int64_t p_span = pd.bytes / (int64_t)es, f_span = fd.bytes / (int64_t)es;
    test_rng r = test_rng_seed(seed);
    void *hx = malloc(es * (size_t)(x_span + 1)), *hp = malloc(es * (size_t)(p_span + 1));
    void *hf = malloc(es * (size_t)(f_span + 1));
    void *sref = malloc(es * (size_t)(sd.numel + 1)), *sgot = malloc(es * (size_t)(sd.numel + 1));
    cr_assert(hx && hp && hf && sref && sgot);
    test_fill_random(p->dtype, hx, x_span, &r);
    test_fill_random(p->dtype, hp, p_span, &r);
    test_fill_random(p->dtype, hf, f_span, &r);
    convnd_problem q;
    void *X;
    cr_assert_eq(convnd_ref_io_input(p, hp, hx, hf, &q, &X), CONVND_OK);
    cr_assert_eq(convnd_ref_state(p, &q, X, sref), CONVND_OK);
    test_conv_case c;
    cr_assert(test_case_init(&c, &q, z_in_place, test_rng_next(&r), err, sizeof err), "%s: %s", id,
              err);
    cr_assert(test_case_set_inputs(&c, X, NULL, err, sizeof err), "%s: %s", id, err);
    /* misalign_prefix: the prefix (1) or the suffix (2) one element past a 16-byte boundary */
    void *dp_buffer, *df_buffer;
    void *dp = upload_maybe_misaligned(p->dtype, hp, p_span, misalign_prefix == 1, &dp_buffer);
    void *df = upload_maybe_misaligned(p->dtype, hf, f_span, misalign_prefix == 2, &df_buffer);
    void *dx = test_device_upload(p->dtype, hx, x_span);
    void *ds = test_device_upload(p->dtype, NULL, sd.numel);
    cr_assert(dp && df && dx && ds);
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        test_poison_fill(p->dtype, sgot, sd.numel > 0 ? sd.numel : 1);
        cr_assert_eq(convnd_memcpy_h2d(ds, sgot, es * (size_t)(sd.numel > 0 ? sd.numel : 1)),
                     CONVND_OK);
        const convnd_status st =
            test_case_run_io(&c, p, spec, p->prefix_size ? dp : NULL, dx,
                             p->suffix_size ? df : NULL, p->state_size ? ds : NULL);
        char msg[1024] = "";
        const int ok = st == CONVND_OK && test_case_check(&c, msg, sizeof msg);
        cr_expect(ok, "%s case %s (order %s): %s%s\n  problem: %s", spec, id,
                  test_order_name(order), st == CONVND_OK ? "" : convnd_last_error(), msg, text);
        cr_assert_eq(convnd_memcpy_d2h(sgot, ds, es * (size_t)sd.numel), CONVND_OK);
        cr_expect(memcmp(sgot, sref, es * (size_t)sd.numel) == 0,
                  "%s case %s (order %s): the state differs from X's last %lld positions\n  "
                  "problem: %s",
                  spec, id, test_order_name(order), (long long)p->state_size, text);
    }
    convnd_free(dp_buffer);
    convnd_free(df_buffer);
    convnd_free(dx);
    convnd_free(ds);
    test_case_free(&c);
    free(X);
    free(hx);
    free(hp);
    free(hf);
    free(sref);
    free(sgot);
}

#define MAX_CONFIGS 256
static test_schedule_config all_configs[MAX_CONFIGS];

TestSuite(io_axis, .timeout = 600);

ParameterizedTestParameters(io_axis, forced_schedules) {
    return cr_make_param_array(test_schedule_config, all_configs,
                               test_list_schedule_configs(NULL, all_configs, MAX_CONFIGS));
}

ParameterizedTest(test_schedule_config *sc, io_axis, forced_schedules) {
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    const convnd_schedule *s = convnd_schedule_table[sc->schedule];
    int ran = 0;
    for (size_t i = 0; i < IO_CASES; ++i) {
        const convnd_problem p = test_parse_valid(io_cases[i].problem);
        char reason[512] = "";
        const int32_t ok = convnd_schedule_supports(spec, &p, reason, sizeof reason);
        if (!(s->reads & CONVND_READS_PREFIX_STATE)) {
            cr_expect(!ok, "%s reads no prefix but accepts case %s", spec, io_cases[i].id);
            cr_expect(strstr(reason, "reads no prefix or suffix and writes no state") != NULL,
                      "%s on case %s: reason '%s'", spec, io_cases[i].id, reason);
            continue;
        }
        /* A schedule that reads prefixes takes every case it takes without one (the same conv
         * over x of X's size), but for configurations without the prefix kernel, which say so. */
        convnd_problem plain = p;
        plain.input[p.io_axis] += p.prefix_size + p.suffix_size;
        plain.io_axis = 0;
        plain.prefix_size = plain.suffix_size = plain.state_size = 0;
        plain.prefix_view.custom = plain.suffix_view.custom = 0;
        char plain_reason[512] = "";
        const int32_t plain_ok =
            convnd_schedule_supports(spec, &plain, plain_reason, sizeof plain_reason);
        if (plain_ok && !ok) {
            cr_expect(strstr(reason, "has no prefix/state kernel") != NULL,
                      "%s refuses case %s, which it runs without the prefix: %s", spec,
                      io_cases[i].id, reason);
            continue;
        }
        cr_expect(ok == plain_ok, "%s accepts case %s but not without its prefix (%s)", spec,
                  io_cases[i].id, plain_reason);
        if (!ok) continue;
        ++ran;
        run_io_case(spec, io_cases[i].id, &p, io_cases[i].z_in_place,
                    test_seed_of(io_cases[i].id, 17), 0);
        /* the same case with the prefix (suffix) misaligned: the vector paths fall back */
        if (p.prefix_size > 0 && p.x_layout == CONVND_CHANNELS_LAST)
            run_io_case(spec, io_cases[i].id, &p, io_cases[i].z_in_place,
                        test_seed_of(io_cases[i].id, 18), 1);
        if (p.suffix_size > 0 && p.x_layout == CONVND_CHANNELS_LAST)
            run_io_case(spec, io_cases[i].id, &p, io_cases[i].z_in_place,
                        test_seed_of(io_cases[i].id, 19), 2);
    }
    /* every configuration that reads prefixes runs some case (its own dtype's) */
    if (s->reads & CONVND_READS_PREFIX_STATE)
        cr_expect(ran > 0 || strstr(spec, "x64_s4") != NULL, "%s ran no case", spec);
}

/* GEMM-shaped prefix problems (C_in/g, C_out/g >= 8) take the implicit GEMM's prefix kernel
 * (tensor cores for f16/bf16/TF32, CUDA cores for exact f32), the others `direct`. */
Test(io_axis, planner_routes_prefix_problems) {
    for (size_t i = 0; i < IO_CASES; ++i) {
        const convnd_problem p = test_parse_valid(io_cases[i].problem);
        const int gemm = p.C_in / p.groups >= 8 && p.C_out / p.groups >= 8;
        const int exact = p.dtype == CONVND_F32 && p.math != CONVND_MATH_ALLOW_TF32;
        test_expect_plan(io_cases[i].problem, !gemm   ? "direct:"
                                              : exact ? "igemm_simt:"
                                                      : "igemm_tc:");
    }
    /* the Wan cache row's shape: a 2-frame cache of a 3x3x3 conv3d, 96 channels */
    test_expect_plan("fwd 3d N=1 Ci=96 Co=96 I=2,16,16 K=3 P0=0,1,1 P1=0,1,1 bf16 x=cl w=cl "
                     "axis=0 pre=2 st=2",
                     "igemm_tc:");
}

/* ---- chunked with the carried state == whole, bit for bit ---------------------------------- */

/* The whole causal problem over `total` steps of time (axis 0) and its chunks: each chunk reads
 * its x as a view of the whole x and writes its y as a view of the whole y (time slices), the
 * previous chunk's state as its prefix (none for the first), and writes its own state. */
static void check_chunked_equals_whole(const convnd_problem *whole, const int64_t *chunks,
                                       int n_chunks, const char *spec, const char *what) {
    const int32_t d = whole->dims;
    const size_t es = convnd_ref_dtype_size(whole->dtype);
    convnd_tensor_desc xd, wd, yd;
    cr_assert_eq(convnd_tensor_describe(whole, CONVND_X, &xd), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert_eq(convnd_tensor_describe(whole, CONVND_W, &wd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(whole, CONVND_Y, &yd), CONVND_OK);
    test_rng r = test_rng_seed(0xc4a1);
    void *hx = malloc(es * (size_t)xd.numel), *hw = malloc(es * (size_t)wd.numel);
    void *hb = malloc(es * (size_t)whole->C_out);
    void *y_whole = malloc(es * (size_t)yd.numel), *y_chunked = malloc(es * (size_t)yd.numel);
    cr_assert(hx && hw && hb && y_whole && y_chunked);
    test_fill_random(whole->dtype, hx, xd.numel, &r);
    test_fill_random(whole->dtype, hw, wd.numel, &r);
    test_fill_random(whole->dtype, hb, whole->C_out, &r);
    void *dx = test_device_upload(whole->dtype, hx, xd.numel);
    void *dw = test_device_upload(whole->dtype, hw, wd.numel);
    void *db = test_device_upload(whole->dtype, hb, whole->C_out);
    void *dy = test_device_upload(whole->dtype, NULL, yd.numel);
    cr_assert(dx && dw && db && dy);
    convnd_options opts = {.schedule = spec};
    cr_assert_eq(
        conv_nd(whole, dx, dw, whole->has_bias ? db : NULL, NULL, dy, NULL, 0, NULL, &opts),
        CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_memcpy_d2h(y_whole, dy, es * (size_t)yd.numel), CONVND_OK);

    /* states ping-pong between two buffers (a state may overlap no other tensor) */
    const int64_t cache = whole->pad_before[0];
    void *states[2] = {NULL, NULL};
    test_poison_fill(whole->dtype, y_chunked, yd.numel);
    cr_assert_eq(convnd_memcpy_h2d(dy, y_chunked, es * (size_t)yd.numel), CONVND_OK);
    int64_t t0 = 0;
    for (int j = 0; j < n_chunks; ++j) {
        convnd_problem chunk = *whole, bound;
        chunk.input[0] = chunks[j];
        chunk.pad_before[0] = cache; /* as bound by convnd_bind_causal_conv */
        cr_assert_eq(convnd_bind_causal_cache(&chunk, j ? cache : 0, cache, &bound), CONVND_OK,
                     "%s", convnd_last_error());
        bound.x_view.custom = bound.y_view.custom = 1;
        memcpy(bound.x_view.strides, xd.strides, sizeof xd.strides);
        memcpy(bound.y_view.strides, yd.strides, sizeof yd.strides);
        convnd_tensor_desc sd;
        cr_assert_eq(convnd_tensor_describe(&bound, CONVND_STATE, &sd), CONVND_OK, "%s",
                     convnd_last_error());
        if (!states[j & 1]) states[j & 1] = test_device_upload(whole->dtype, NULL, sd.numel);
        convnd_plan_t *plan;
        cr_assert_eq(convnd_plan_create(&plan, &bound, &opts), CONVND_OK, "%s",
                     convnd_last_error());
        /* the time slices [t0, t0 + chunk) of the whole x and y (outputs: one per step) */
        const convnd_io io = {(const char *)dx + es * (size_t)(t0 * xd.strides[2]),
                              j ? states[(j + 1) & 1] : NULL,
                              dw,
                              whole->has_bias ? db : NULL,
                              NULL,
                              (char *)dy + es * (size_t)(t0 * yd.strides[2]),
                              states[j & 1],
                              NULL,
                              NULL,
                              NULL,
                              NULL,
                              NULL,
                              NULL,
                              NULL,
                              NULL};
        cr_assert_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_OK, "%s chunk %d: %s",
                     what, j, convnd_last_error());
        convnd_plan_destroy(plan);
        t0 += chunks[j];
    }
    (void)d;
    cr_assert_eq(convnd_synchronize(NULL), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2h(y_chunked, dy, es * (size_t)yd.numel), CONVND_OK);
    int64_t differ = 0, first = -1;
    for (int64_t i = 0; i < yd.numel; ++i)
        if (memcmp((char *)y_chunked + es * (size_t)i, (char *)y_whole + es * (size_t)i, es)) {
            if (first < 0) first = i;
            ++differ;
        }
    cr_expect(differ == 0,
              "%s on %s: %lld of %lld outputs differ from the whole run (first at %lld)", what,
              spec, (long long)differ, (long long)yd.numel, (long long)first);
    void *dev[] = {dx, dw, db, dy, states[0], states[1]};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i)
        if (dev[i]) convnd_free(dev[i]);
    free(hx);
    free(hw);
    free(hb);
    free(y_whole);
    free(y_chunked);
}

/* Chunk lengths summing to the whole, with one shorter than the cache (its state starts with
 * zeros from the padding) and single steps (decode). */
static const int64_t chunks_1d[] = {2, 9, 1, 1, 6, 5};
static const int64_t chunks_3d[] = {1, 3, 2, 1};

Test(io_axis, chunked_equals_whole_conv1d) {
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        /* depthwise causal conv1d, width 4, dilation 2: cache D(K-1) = 6 */
        convnd_problem p =
            test_parse_valid("fwd 1d N=2 Ci=6 Co=6 g=6 I=24 K=4 D=2 P0=6 P1=0 bias act=silu");
        check_chunked_equals_whole(&p, chunks_1d, 6, "direct", "conv1d depthwise");
        /* a dense one in bf16, channels-last */
        p = test_parse_valid("fwd 1d N=1 Ci=5 Co=3 I=24 K=3 P0=2 P1=0 bf16 x=cl");
        check_chunked_equals_whole(&p, chunks_1d, 6, "direct:t128", "conv1d dense cl");
        /* the implicit GEMMs' prefix kernel: vector path (channels in 16-byte chunks), the
         * gather path (channels-first), tensor cores and exact f32 */
        p = test_parse_valid("fwd 1d N=2 Ci=16 Co=16 I=24 K=4 D=2 P0=6 P1=0 bf16 x=cl w=cl bias");
        check_chunked_equals_whole(&p, chunks_1d, 6, "igemm_tc:32x64x32_s2", "conv1d igemm_tc cl");
        p = test_parse_valid("fwd 1d N=2 Ci=8 Co=12 I=24 K=3 P0=2 P1=0 bias act=silu");
        check_chunked_equals_whole(&p, chunks_1d, 6, "igemm_simt:32x32x8_s2", "conv1d igemm_simt");
        p = test_parse_valid("fwd 1d N=1 Ci=8 Co=8 I=24 K=3 P0=2 P1=0 x=cl w=cl");
        check_chunked_equals_whole(&p, chunks_1d, 6, "igemm_simt:64x64x8_s3",
                                   "conv1d igemm_simt cl");
    }
}

Test(io_axis, chunked_equals_whole_conv3d_time) {
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        /* Wan's causal conv3d: kernel 3, time padding 2 (CACHE_T = 2), H/W padding 1 */
        convnd_problem p;
        const convnd_shape in = {5, {1, 3, 7, 4, 5}}, w = {5, {4, 3, 3, 3, 3}};
        const convnd_ints pad = {1, {1}};
        cr_assert_eq(convnd_bind_causal_conv(3, &in, &w, 4, NULL, &pad, NULL, 1, &p), CONVND_OK,
                     "%s", convnd_last_error());
        p.has_bias = 1;
        check_chunked_equals_whole(&p, chunks_3d, 4, "direct", "causal conv3d");
        p.x_layout = p.y_layout = CONVND_CHANNELS_LAST;
        p.dtype = CONVND_F16;
        check_chunked_equals_whole(&p, chunks_3d, 4, "direct:t128", "causal conv3d f16 cl");
        /* the implicit GEMMs' prefix kernel, 8 channels: f16 channels-last (vector path) on
         * tensor cores, exact f32 channels-first (gather) on CUDA cores */
        const convnd_shape in8 = {5, {1, 8, 7, 4, 5}}, w8 = {5, {8, 8, 3, 3, 3}};
        cr_assert_eq(convnd_bind_causal_conv(3, &in8, &w8, 8, NULL, &pad, NULL, 1, &p), CONVND_OK,
                     "%s", convnd_last_error());
        p.has_bias = 1;
        check_chunked_equals_whole(&p, chunks_3d, 4, "igemm_simt:32x32x8_s2",
                                   "causal conv3d igemm_simt");
        p.x_layout = p.y_layout = p.w_layout = CONVND_CHANNELS_LAST;
        p.dtype = CONVND_F16;
        check_chunked_equals_whole(&p, chunks_3d, 4, "igemm_tc:64x64x32_s3",
                                   "causal conv3d igemm_tc f16 cl");
    }
}

/* ---- sharded with halos == whole, bit for bit (SPEC §14) ----------------------------------- */

/* Rows [row0, row0 + part.shape[2 + axis]) of the whole x along axis, packed as part describes
 * (the prefix or suffix tensor of a shard's problem). */
static void *pack_rows(convnd_dtype dt, const convnd_tensor_desc *whole, const void *hx,
                       const convnd_tensor_desc *part, int axis, int64_t row0) {
    const size_t es = convnd_ref_dtype_size(dt);
    void *out = malloc(es * (size_t)(part->numel > 0 ? part->numel : 1));
    cr_assert(out);
    for (int64_t i = 0; i < part->numel; ++i) {
        int64_t rest = i, src = 0, dst = 0;
        for (int r = part->rank - 1; r >= 0; --r) {
            const int64_t idx = rest % part->shape[r];
            rest /= part->shape[r];
            dst += idx * part->strides[r];
            src += (idx + (r == 2 + axis ? row0 : 0)) * whole->strides[r];
        }
        memcpy((char *)out + es * (size_t)dst, (const char *)hx + es * (size_t)src, es);
    }
    return out;
}

/* Shards run in two parts so far (each test checks that some did: tiny shards cannot split). */
static int64_t shards_split;

/* Runs one part of a shard (convnd_shard_rows or convnd_shard_part) as its own problem: x a view
 * of rows [x_begin, x_end) of the whole x (device dx), its halo rows packed from the host copy
 * hx as prefix and suffix, y a view of its rows of the whole y (device dy). */
static void run_shard_part(const convnd_problem *whole, int axis, const convnd_shard *sh,
                           const convnd_tensor_desc *xd, const convnd_tensor_desc *yd,
                           const void *hx, const void *dx, const void *dw, const void *bias,
                           void *dy, const convnd_options *opts, int halo_views, const char *what) {
    const convnd_dtype dt = whole->dtype;
    const size_t es = convnd_ref_dtype_size(dt);
    convnd_problem q = *whole;
    q.input[axis] = sh->x_end - sh->x_begin;
    q.io_axis = axis;
    q.prefix_size = sh->prefix_size;
    q.suffix_size = sh->suffix_size;
    q.pad_before[axis] = sh->pad_before;
    q.pad_after[axis] = sh->pad_after;
    q.x_view.custom = q.y_view.custom = 1;
    memcpy(q.x_view.strides, xd->strides, sizeof xd->strides);
    memcpy(q.y_view.strides, yd->strides, sizeof yd->strides);
    if (halo_views) { /* the halo rows read in place from the whole x too (SPEC §14's views) */
        q.prefix_view.custom = q.prefix_size > 0;
        q.suffix_view.custom = q.suffix_size > 0;
        memcpy(q.prefix_view.strides, xd->strides, sizeof xd->strides);
        memcpy(q.suffix_view.strides, xd->strides, sizeof xd->strides);
    }
    int64_t out[CONVND_MAX_DIMS];
    cr_assert_eq(convnd_output_size(&q, out), CONVND_OK, "%s: %s", what, convnd_last_error());
    cr_expect_eq(out[axis], sh->out_end - sh->out_begin, "%s: %lld rows", what,
                 (long long)out[axis]);
    convnd_tensor_desc pd = {0}, fd = {0}; /* none: a part with no halo, or halo views */
    if (!halo_views && (q.prefix_size || q.suffix_size)) {
        cr_assert_eq(convnd_tensor_describe(&q, CONVND_X_PREFIX, &pd), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&q, CONVND_X_SUFFIX, &fd), CONVND_OK);
    }
    void *hp = pack_rows(dt, xd, hx, &pd, axis, sh->x_begin - sh->prefix_size);
    void *hf = pack_rows(dt, xd, hx, &fd, axis, sh->x_end);
    void *dp = test_device_upload(dt, hp, pd.numel > 0 ? pd.numel : 1);
    void *df = test_device_upload(dt, hf, fd.numel > 0 ? fd.numel : 1);
    cr_assert(dp && df);
    const int64_t row = xd->strides[2 + axis];
    const void *prefix =
        halo_views ? (const char *)dx + es * (size_t)((sh->x_begin - sh->prefix_size) * row) : dp;
    const void *suffix = halo_views ? (const char *)dx + es * (size_t)(sh->x_end * row) : df;
    convnd_plan_t *plan;
    cr_assert_eq(convnd_plan_create(&plan, &q, opts), CONVND_OK, "%s on %s: %s", what,
                 opts->schedule, convnd_last_error());
    convnd_io io = {0};
    io.x = (const char *)dx + es * (size_t)(sh->x_begin * row);
    io.x_prefix = prefix;
    io.x_suffix = suffix;
    io.w = dw;
    io.bias = bias;
    io.y = (char *)dy + es * (size_t)(sh->out_begin * yd->strides[2 + axis]);
    cr_assert_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_OK, "%s: %s", what,
                 convnd_last_error());
    convnd_plan_destroy(plan);
    convnd_free(dp);
    convnd_free(df);
    free(hp);
    free(hf);
}

enum { SHARD_ALIGNED = 1, SHARD_PARTS = 2, SHARD_HALO_VIEWS = 4 };

/* The whole problem (text) forward on spec, then split along axis into shards of the given sizes:
 * each shard runs its rows (convnd_shard_rows, or convnd_shard_rows_aligned with SHARD_ALIGNED)
 * as one problem, or, with SHARD_PARTS, as its interior rows and then the rest before and after
 * them (convnd_shard_part: the overlap of convnd.distributed), with x a view of its rows of the
 * whole x, its halo rows as a packed prefix and suffix, and y a view of its rows of the whole
 * (poisoned) y (with SHARD_HALO_VIEWS the halo rows as views of the whole x too). The assembled y
 * must equal the whole run's bit for bit, every output written. */
static void check_sharded(const char *text, int axis, const int64_t *sizes, int n, const char *spec,
                          int mode) {
    const convnd_problem whole = test_parse_valid(text);
    const convnd_dtype dt = whole.dtype;
    const size_t es = convnd_ref_dtype_size(dt);
    convnd_tensor_desc xd, wd, yd;
    cr_assert_eq(convnd_tensor_describe(&whole, CONVND_X, &xd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&whole, CONVND_W, &wd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&whole, CONVND_Y, &yd), CONVND_OK);
    test_rng r = test_rng_seed(test_seed_of(text, axis));
    void *hx = malloc(es * (size_t)xd.numel), *hw = malloc(es * (size_t)wd.numel);
    void *hb = malloc(es * (size_t)whole.C_out);
    void *y_whole = malloc(es * (size_t)yd.numel), *y_sharded = malloc(es * (size_t)yd.numel);
    cr_assert(hx && hw && hb && y_whole && y_sharded);
    test_fill_random(dt, hx, xd.numel, &r);
    test_fill_random(dt, hw, wd.numel, &r);
    test_fill_random(dt, hb, whole.C_out, &r);
    void *dx = test_device_upload(dt, hx, xd.numel), *dw = test_device_upload(dt, hw, wd.numel);
    void *db = test_device_upload(dt, hb, whole.C_out),
         *dy = test_device_upload(dt, NULL, yd.numel);
    cr_assert(dx && dw && db && dy);
    const void *bias = whole.has_bias ? db : NULL;
    const convnd_options opts = {.schedule = spec};
    cr_assert_eq(conv_nd(&whole, dx, dw, bias, NULL, dy, NULL, 0, NULL, &opts), CONVND_OK,
                 "%s on %s: %s", text, spec, convnd_last_error());
    cr_assert_eq(convnd_memcpy_d2h(y_whole, dy, es * (size_t)yd.numel), CONVND_OK);
    test_poison_fill(dt, y_sharded, yd.numel);
    cr_assert_eq(convnd_memcpy_h2d(dy, y_sharded, es * (size_t)yd.numel), CONVND_OK);

    int64_t begin = 0, rows = 0, split = 0;
    for (int j = 0; j < n; ++j) {
        convnd_shard sh;
        cr_assert_eq((mode & SHARD_ALIGNED ? convnd_shard_rows_aligned
                                           : convnd_shard_rows)(&whole, axis, begin, sizes[j], &sh),
                     CONVND_OK, "%s", convnd_last_error());
        cr_expect_eq(sh.out_begin, rows, "%s shard %d starts at output row %lld, not %lld", text, j,
                     (long long)sh.out_begin, (long long)rows);
        rows = sh.out_end;
        char what[600];
        snprintf(what, sizeof what, "%s axis %d shard %d", text, axis, j);
        if ((mode & SHARD_PARTS) && sh.interior_begin < sh.interior_end &&
            (sh.out_begin < sh.interior_begin || sh.interior_end < sh.out_end)) {
            /* the interior first (as while the halo is in flight), then the rows before and
             * after it */
            const int64_t cuts[3][2] = {{sh.interior_begin, sh.interior_end},
                                        {sh.out_begin, sh.interior_begin},
                                        {sh.interior_end, sh.out_end}};
            for (int k = 0; k < 3; ++k) {
                if (cuts[k][0] >= cuts[k][1]) continue;
                convnd_shard part;
                cr_assert_eq(
                    convnd_shard_part(&whole, axis, begin, sizes[j], cuts[k][0], cuts[k][1], &part),
                    CONVND_OK, "%s: %s", what, convnd_last_error());
                cr_expect(k > 0 || (part.prefix_size == 0 && part.suffix_size == 0),
                          "%s: the interior reads a halo", what);
                run_shard_part(&whole, axis, &part, &xd, &yd, hx, dx, dw, bias, dy, &opts,
                               mode & SHARD_HALO_VIEWS, what);
            }
            ++split;
        } else if (sh.out_end > sh.out_begin) {
            run_shard_part(&whole, axis, &sh, &xd, &yd, hx, dx, dw, bias, dy, &opts,
                           mode & SHARD_HALO_VIEWS, what);
        }
        begin += sizes[j];
    }
    cr_assert_eq(begin, whole.input[axis], "the shards cover %lld of %lld rows", (long long)begin,
                 (long long)whole.input[axis]);
    cr_expect_eq(rows, yd.shape[2 + axis], "the shards computed %lld of %lld output rows",
                 (long long)rows, (long long)yd.shape[2 + axis]);
    shards_split += split;
    cr_assert_eq(convnd_synchronize(NULL), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2h(y_sharded, dy, es * (size_t)yd.numel), CONVND_OK);
    int64_t differ = 0, first = -1;
    for (int64_t i = 0; i < yd.numel; ++i)
        if (memcmp((char *)y_sharded + es * (size_t)i, (char *)y_whole + es * (size_t)i, es)) {
            if (first < 0) first = i;
            ++differ;
        }
    cr_expect(differ == 0,
              "%s axis %d on %s%s: %lld of %lld outputs differ from the whole run (first at %lld)",
              text, axis, spec, mode & SHARD_PARTS ? " in parts" : "", (long long)differ,
              (long long)yd.numel, (long long)first);
    void *dev[] = {dx, dw, db, dy};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i)
        convnd_free(dev[i]);
    free(hx), free(hw), free(hb), free(y_whole), free(y_sharded);
}

/* Each shard whole and in parts, by SPEC §14's rows and by the aligned ones, its halo packed
 * apart and read in place as views of the whole x. */
static void check_sharded_equals_whole(const char *text, int axis, const int64_t *sizes, int n,
                                       const char *spec) {
    for (int mode = 0; mode < 8; ++mode)
        check_sharded(text, axis, sizes, n, spec, mode);
}

/* The rule's figures on a case worked by hand: I=10, K=3, P0=P1=1 (O=10) in shards 4, 4, 2. */
Test(io_axis, shard_rows_by_hand) {
    const convnd_problem p = test_parse_valid("fwd 1d Ci=1 Co=1 I=10 K=3 P0=1 P1=1");
    const struct {
        int64_t begin, size;
        convnd_shard want;
    } cases[] = {
        /* out rows, in rows, x rows, prefix, suffix, pads, interior rows */
        {0, 4, {0, 5, -1, 6, 0, 4, 0, 2, 1, 0, 0, 3}},
        {4, 4, {5, 9, 4, 10, 4, 8, 0, 2, 0, 0, 5, 7}},
        {8, 2, {9, 10, 8, 11, 8, 10, 0, 0, 0, 1, 9, 10}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        convnd_shard got;
        cr_assert_eq(convnd_shard_rows(&p, 0, cases[i].begin, cases[i].size, &got), CONVND_OK, "%s",
                     convnd_last_error());
        cr_expect(memcmp(&got, &cases[i].want, sizeof got) == 0,
                  "shard [%lld, +%lld): out [%lld, %lld) in [%lld, %lld) prefix %lld suffix %lld "
                  "pads %lld %lld",
                  (long long)cases[i].begin, (long long)cases[i].size, (long long)got.out_begin,
                  (long long)got.out_end, (long long)got.in_begin, (long long)got.in_end,
                  (long long)got.prefix_size, (long long)got.suffix_size, (long long)got.pad_before,
                  (long long)got.pad_after);
    }
    /* stride 2: a shard no window starts in computes nothing and reads nothing */
    const convnd_problem s2 = test_parse_valid("fwd 1d Ci=1 Co=1 I=9 K=3 S=4");
    convnd_shard got;
    cr_assert_eq(convnd_shard_rows(&s2, 0, 1, 2, &got), CONVND_OK);
    cr_expect(got.out_begin == 1 && got.out_end == 1 && got.suffix_size == 0, "[%lld, %lld)",
              (long long)got.out_begin, (long long)got.out_end);
    /* aligned rows of a "same" conv are the input's rows; the halo on both sides: the middle
     * shard [4, 8) computes rows [4, 8) from rows [3, 9): one row of prefix and of suffix */
    cr_assert_eq(convnd_shard_rows_aligned(&p, 0, 4, 4, &got), CONVND_OK, "%s",
                 convnd_last_error());
    const convnd_shard middle = {4, 8, 3, 9, 4, 8, 1, 1, 0, 0, 5, 7};
    cr_expect(memcmp(&got, &middle, sizeof got) == 0,
              "aligned [4, +4): out [%lld, %lld) prefix %lld suffix %lld pads %lld %lld interior "
              "[%lld, %lld)",
              (long long)got.out_begin, (long long)got.out_end, (long long)got.prefix_size,
              (long long)got.suffix_size, (long long)got.pad_before, (long long)got.pad_after,
              (long long)got.interior_begin, (long long)got.interior_end);
    /* rows that read none of the shard's rows: x is its nearest row, cropped by the padding (rows
     * [6, 8) read [5, 9): x = row 3, suffix rows [4, 8), pads -2 and 1) */
    const convnd_problem same = test_parse_valid("fwd 1d Ci=1 Co=1 I=8 K=3 P0=1 P1=1");
    cr_assert_eq(convnd_shard_part(&same, 0, 0, 4, 6, 8, &got), CONVND_OK);
    cr_expect(got.x_begin == 3 && got.x_end == 4 && got.prefix_size == 0 && got.suffix_size == 4 &&
                  got.pad_before == -2 && got.pad_after == 1,
              "x [%lld, %lld) suffix %lld pads %lld %lld", (long long)got.x_begin,
              (long long)got.x_end, (long long)got.suffix_size, (long long)got.pad_before,
              (long long)got.pad_after);
    /* stride 2 (O = 5 of I = 10): rows [ceil(4 * 5 / 10), ceil(8 * 5 / 10)) = [2, 4) */
    const convnd_problem half = test_parse_valid("fwd 1d Ci=1 Co=1 I=10 K=3 S=2 P0=1 P1=1");
    cr_assert_eq(convnd_shard_rows_aligned(&half, 0, 4, 4, &got), CONVND_OK);
    cr_expect(got.out_begin == 2 && got.out_end == 4, "[%lld, %lld)", (long long)got.out_begin,
              (long long)got.out_end);
}

Test(io_axis, bad_shards_are_refused) {
    convnd_problem p = test_parse_valid("fwd 2d Ci=2 Co=2 I=8,6 K=3 P0=1 P1=1");
    convnd_shard sh, untouched;
    memset(&sh, 0x5a, sizeof sh);
    untouched = sh;
    cr_expect_eq(convnd_shard_rows(&p, 2, 0, 4, &sh), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "axis=2 must name a spatial dim 0..1"), "%s",
              convnd_last_error());
    cr_expect_eq(convnd_shard_rows(&p, 0, 6, 3, &sh), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "shard rows [6, 6+3) must be non-empty and inside "
                                          "input[0]=8"),
              "%s", convnd_last_error());
    cr_expect_eq(convnd_shard_rows(&p, 1, 0, 0, &sh), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect_eq(convnd_shard_rows(&p, 0, -1, 2, &sh), CONVND_ERR_INVALID_ARGUMENT);
    convnd_problem io = test_parse_valid("fwd 2d Ci=2 Co=2 I=8,6 K=3 axis=0 suf=2");
    cr_expect_eq(convnd_shard_rows(&io, 0, 0, 4, &sh), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "suffix_size=2"), "%s", convnd_last_error());
    /* a part must lie inside the output (8 rows) and read some of the shard's rows */
    cr_expect_eq(convnd_shard_part(&p, 0, 0, 4, 5, 9, &sh), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "output rows [5, 9) must be non-empty and inside the "
                                          "output's 8 rows"),
              "%s", convnd_last_error());
    cr_expect_eq(convnd_shard_part(&p, 0, 0, 4, 2, 2, &sh), CONVND_ERR_INVALID_ARGUMENT);
    p.mode = CONVND_TRANSPOSED;
    cr_expect_eq(convnd_shard_rows(&p, 0, 0, 4, &sh), CONVND_ERR_UNSUPPORTED);
    cr_expect(memcmp(&sh, &untouched, sizeof sh) == 0, "the shard was written on error");
}

Test(io_axis, sharded_equals_whole_direct) {
    static const int64_t even3[] = {3, 3, 3}, uneven[] = {2, 4, 1}, tiny[] = {1, 1, 1, 8},
                         mixed[] = {4, 1, 6}, h8[] = {3, 2, 3};
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        check_sharded_equals_whole("fwd 2d N=2 Ci=3 Co=4 I=9,7 K=3 P0=1 P1=1 bias", 0, even3, 3,
                                   "direct");
        check_sharded_equals_whole("fwd 2d N=2 Ci=3 Co=4 I=9,7 K=3 P0=1 P1=1 bias", 1, uneven, 3,
                                   "direct");
        /* stride 2, dilation 2, asymmetric and negative padding; shards smaller than the halo
         * (4 rows: a shard's suffix spans several later shards) */
        check_sharded_equals_whole("fwd 2d N=1 Ci=2 Co=3 I=11,6 K=3,2 S=2,1 D=2,1 P0=3,0 P1=-1,1",
                                   0, mixed, 3, "direct");
        check_sharded_equals_whole("fwd 2d N=1 Ci=2 Co=3 I=11,6 K=3,2 S=2,1 D=2,1 P0=3,0 P1=-1,1",
                                   0, tiny, 4, "direct");
        check_sharded_equals_whole("fwd 2d N=1 Ci=2 Co=2 I=11,5 K=2,3 S=3,1 P0=-1,1 P1=2,1 bf16 "
                                   "x=cl",
                                   0, tiny, 4, "direct:t128");
        check_sharded_equals_whole("fwd 3d N=1 Ci=2 Co=2 I=3,8,5 K=3 P0=1 P1=1 act=silu", 1, h8, 3,
                                   "direct");
    }
    cr_expect_gt(shards_split, 0, "no shard ran in two parts");
}

Test(io_axis, sharded_equals_whole_igemm) {
    static const int64_t rows10[] = {3, 4, 3}, w6[] = {2, 2, 2}, h9[] = {4, 2, 3},
                         tiny[] = {1, 2, 1, 4};
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        /* exact f32 on CUDA cores: gather (channels-first) and vector (channels-last) paths */
        check_sharded_equals_whole("fwd 2d N=2 Ci=8 Co=12 I=10,6 K=3 P0=1 P1=1 bias", 0, rows10, 3,
                                   "igemm_simt:32x32x8_s2");
        check_sharded_equals_whole("fwd 2d N=2 Ci=8 Co=12 I=10,6 K=3 P0=1 P1=1 bias", 1, w6, 3,
                                   "igemm_simt:32x32x8_s2");
        check_sharded_equals_whole("fwd 2d N=1 Ci=8 Co=8 I=8,6 K=3 D=2 P0=2 P1=2 x=cl w=cl", 0,
                                   tiny, 4, "igemm_simt:64x64x8_s3");
        /* tensor cores: f16 channels-last (vector path), stride 2; bf16 3-D dilated along W;
         * TF32 channels-first (gather) with negative padding */
        check_sharded_equals_whole("fwd 2d N=1 Ci=16 Co=16 I=9,8 K=3 S=2 P0=1 P1=0 f16 x=cl w=cl "
                                   "bias",
                                   0, h9, 3, "igemm_tc:32x64x32_s2");
        check_sharded_equals_whole("fwd 3d N=1 Ci=16 Co=16 I=3,3,6 K=3 D=1,1,2 P0=0,1,2 P1=0,1,2 "
                                   "bf16 x=cl w=cl",
                                   2, w6, 3, "igemm_tc:64x64x32_s3");
        check_sharded_equals_whole("fwd 2d N=2 Ci=8 Co=8 I=10,4 K=3 P0=-1,1 P1=2,1 tf32", 0, rows10,
                                   3, "igemm_tc:32x64x32_s2");
    }
    cr_expect_gt(shards_split, 0, "no shard ran in two parts");
}

/* ---- the binding ----------------------------------------------------------------------------- */

Test(io_axis, causal_cache_binding) {
    convnd_problem causal, bound;
    const convnd_shape in = {5, {1, 8, 4, 6, 6}}, w = {5, {8, 8, 3, 3, 3}};
    const convnd_ints pad = {1, {1}};
    cr_assert_eq(convnd_bind_causal_conv(3, &in, &w, -1, NULL, &pad, NULL, 1, &causal), CONVND_OK);
    cr_assert_eq(convnd_bind_causal_cache(&causal, 2, 2, &bound), CONVND_OK, "%s",
                 convnd_last_error());
    cr_expect_eq(bound.io_axis, 0);
    cr_expect_eq(bound.prefix_size, 2);
    cr_expect_eq(bound.state_size, 2);
    cr_expect_eq(bound.pad_before[0], 0);
    int64_t out[CONVND_MAX_DIMS];
    cr_assert_eq(convnd_output_size(&bound, out), CONVND_OK);
    cr_expect_eq(out[0], 4, "one output per new frame, got %lld", (long long)out[0]);
    /* Wan's second chunk may have one cached frame only: P0 = 1 of zero padding remains */
    cr_assert_eq(convnd_bind_causal_cache(&causal, 1, 2, &bound), CONVND_OK);
    cr_expect_eq(bound.pad_before[0], 1);
    convnd_problem untouched = bound;
    cr_expect_eq(convnd_bind_causal_cache(&causal, 3, 2, &bound), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "prefix_frames=3 must be in [0, P0=2]"), "%s",
              convnd_last_error());
    cr_expect(memcmp(&untouched, &bound, sizeof bound) == 0, "the problem changed on error");
    cr_expect_eq(convnd_bind_causal_cache(&causal, 2, -1, &bound), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "state_frames=-1"), "%s", convnd_last_error());
}

/* ---- rejections -------------------------------------------------------------------------- */

static void expect_invalid(const char *problem, convnd_status status, const char *needle) {
    convnd_problem p = test_parse(problem);
    const convnd_status st = convnd_validate(&p);
    cr_expect_eq(st, status, "%s: status %s (%s)", problem, convnd_status_string(st),
                 convnd_last_error());
    cr_expect(strstr(convnd_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", problem,
              convnd_last_error(), needle);
}

Test(io_axis, bad_prefix_and_state_are_refused) {
    expect_invalid("fwd 2d Ci=2 Co=2 I=4,4 K=3 axis=2 pre=1", CONVND_ERR_INVALID_ARGUMENT,
                   "io_axis=2 must name a spatial dim 0..1");
    expect_invalid("fwd 1d Ci=2 Co=2 I=4 K=3 pre=-1", CONVND_ERR_INVALID_ARGUMENT,
                   "prefix_size=-1 must be >= 0");
    expect_invalid("fwd 1d Ci=2 Co=2 I=4 K=3 st=-2", CONVND_ERR_INVALID_ARGUMENT,
                   "state_size=-2 must be >= 0");
    expect_invalid("tr 1d Ci=2 Co=2 I=4 K=3 pre=2", CONVND_ERR_UNSUPPORTED, "need mode=forward");
    expect_invalid("wg 1d Ci=2 Co=2 I=4 K=3 st=2", CONVND_ERR_UNSUPPORTED, "need mode=forward");
    expect_invalid("fwd 1d Ci=2 Co=2 I=4 K=3 suf=-1", CONVND_ERR_INVALID_ARGUMENT,
                   "suffix_size=-1 must be >= 0");
    /* the halo views (SPEC §14): only for a halo the problem has, within their extents */
    expect_invalid("fwd 1d Ci=2 Co=2 I=4 K=3 fs=2,1,1", CONVND_ERR_INVALID_ARGUMENT,
                   "suffix_view.custom=1 but the problem has no suffix (suffix_size=0)");
    expect_invalid("fwd 1d Ci=2 Co=2 I=4 K=3 axis=0 pre=1 ps=6,3,1:2", CONVND_ERR_INVALID_ARGUMENT,
                   "prefix_view of shape [1, 2, 1] with strides [6, 3, 1] reaches 4 elements from "
                   "its base, past its extent=2");
    /* the output size counts the prefix: 1 + 2 - 3 + 1 = 1 */
    convnd_problem p = test_parse_valid("fwd 1d Ci=2 Co=2 I=1 K=3 pre=2");
    int64_t out[CONVND_MAX_DIMS];
    cr_assert_eq(convnd_output_size(&p, out), CONVND_OK);
    cr_expect_eq(out[0], 1);
    convnd_tensor_desc d;
    p = test_parse_valid("fwd 1d Ci=2 Co=2 I=4 K=3");
    cr_expect_eq(convnd_tensor_describe(&p, CONVND_STATE, &d), CONVND_ERR_INVALID_ARGUMENT);
    p = test_parse_valid("fwd 3d N=2 Ci=3 Co=2 I=4,5,6 K=1 x=cl axis=1 pre=2 st=3");
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_X_PREFIX, &d), CONVND_OK);
    const int64_t shape[] = {2, 3, 4, 2, 6}, strides[] = {144, 1, 36, 18, 3};
    for (int i = 0; i < 5; ++i) {
        cr_expect_eq(d.shape[i], shape[i], "x_prefix shape[%d]=%lld", i, (long long)d.shape[i]);
        cr_expect_eq(d.strides[i], strides[i], "x_prefix strides[%d]=%lld", i,
                     (long long)d.strides[i]);
    }
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_STATE, &d), CONVND_OK);
    cr_expect_eq(d.shape[3], 3);
    cr_expect_eq(d.numel, 2 * 3 * 4 * 3 * 6);
}

Test(io_axis, bad_pointers_write_nothing) {
    const convnd_problem p = test_parse_valid("fwd 1d N=2 Ci=3 Co=3 I=8 K=3 axis=0 pre=2 st=2");
    float h[64] = {0}, poison[64];
    test_poison_fill(CONVND_F32, poison, 64);
    /* one buffer per tensor; y and the state poisoned */
    void *x = test_device_upload(CONVND_F32, h, 64), *xp = test_device_upload(CONVND_F32, h, 64);
    void *w = test_device_upload(CONVND_F32, h, 64),
         *y = test_device_upload(CONVND_F32, poison, 64);
    void *state = test_device_upload(CONVND_F32, poison, 64);
    cr_assert(x && xp && w && y && state);
    cr_expect_eq(conv_nd(&p, x, w, NULL, NULL, y, NULL, 0, NULL, NULL), CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "x_prefix is NULL but the problem reads 48 bytes of it "
                                          "(prefix_size > 0: pass it with convnd_plan_execute_io)"),
              "%s", convnd_last_error());
    convnd_plan_t *plan;
    cr_assert_eq(convnd_plan_create(&plan, &p, NULL), CONVND_OK, "%s", convnd_last_error());
    convnd_io io = {.x = x, .x_prefix = xp, .w = w, .y = y};
    cr_expect_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "state is NULL but the problem writes 48 bytes to it"),
              "%s", convnd_last_error());
    io.state = (char *)x + 16; /* overlaps x */
    cr_expect_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_ERR_ALIASING);
    cr_expect(strstr(convnd_last_error(), "x [") && strstr(convnd_last_error(), "overlaps state"),
              "%s", convnd_last_error());
    io.state = xp; /* in place over the prefix: the kernel would read what it overwrites */
    cr_expect_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_ERR_ALIASING);
    cr_expect(strstr(convnd_last_error(), "x_prefix ["), "%s", convnd_last_error());
    io.state = (char *)y + 8; /* overlaps y */
    cr_expect_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_ERR_ALIASING);
    io.state = state;
    io.y = (char *)xp + 4; /* y over the prefix */
    cr_expect_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_ERR_ALIASING);
    cr_expect(strstr(convnd_last_error(), "x_prefix [") && strstr(convnd_last_error(), "y ["), "%s",
              convnd_last_error());
    convnd_plan_destroy(plan);
    float got[64];
    cr_assert_eq(convnd_memcpy_d2h(got, y, sizeof got), CONVND_OK);
    cr_expect(memcmp(got, poison, sizeof got) == 0, "y written by a refused call");
    cr_assert_eq(convnd_memcpy_d2h(got, state, sizeof got), CONVND_OK);
    cr_expect(memcmp(got, poison, sizeof got) == 0, "state written by a refused call");
    /* a forced schedule that reads no prefix: refused with its reason */
    convnd_options opts = {.schedule = "tiled_direct"};
    cr_expect_eq(convnd_plan_create(&plan, &p, &opts), CONVND_ERR_UNSUPPORTED);
    cr_expect(strstr(convnd_last_error(), "reads no prefix or suffix and writes no state"), "%s",
              convnd_last_error());
    void *dev[] = {x, xp, w, y, state};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i)
        convnd_free(dev[i]);
}
