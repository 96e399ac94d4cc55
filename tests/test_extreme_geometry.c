/* Strides, dilations and paddings near 2^62 and 2^63 (issue #18, findings 1 and 3) on every
 * schedule:config that supports them, against the reference, under the suite's timeout: a
 * schedule's cost must be bounded by its work, never by the size of a stride or padding, and no
 * kernel may form the input position of an output past the last one in signed arithmetic (the
 * suite runs under UBSan in CI). Then named cases that once survived planted bugs (item 9): a
 * 3-D channels-last depthwise row with a depth stride, a grouped problem whose C_in is a whole
 * number of vectors but C_in/groups is not, and a 64-bit-offset run over an x of more than 2^31
 * elements of which only the touched ones exist (a sparse mapping). */
#define _GNU_SOURCE /* MAP_NORESERVE */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "convnd.h"
#include "convnd_ref.h"
#include "test_contract_support.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

TestSuite(extreme_geometry, .timeout = 300);

#define P62 "4611686018427387904" /* 2^62 */
#define P61 "2305843009213693952" /* 2^61 */
#define Q63 "6917529027641081856" /* 3 * 2^61: 3/4 of 2^63 */

static const char *const extreme[] = {
    /* depthwise 1-D (the streaming configs): two outputs 2^62 (or 3*2^61) inputs apart */
    "fwd 1d Ci=8 Co=8 g=8 I=9 K=3 S=" P62 " P0=1 P1=" P62 " bias",
    "fwd 1d Ci=8 Co=8 g=8 I=9 K=3 S=" Q63 " P0=1 P1=" Q63 " x=cl w=cl y=cl",
    "fwd 1d Ci=8 Co=8 g=8 I=9 K=2 D=" P62 " P1=" P62,
    /* kernel spans as wide as the stream window (4, 8): every slot is a tap */
    "fwd 1d Ci=8 Co=8 g=8 I=9 K=4 S=" P62 " P0=1 P1=" P62,
    "fwd 1d Ci=8 Co=8 g=8 I=12 K=8 S=" P62 " P0=2 P1=" P62 " x=cl w=cl y=cl",
    "fwd 1d Ci=8 Co=8 g=8 I=9 K=3 S=" P62 " P0=" P61 " P1=" P61 " bias",
    /* depthwise, grouped and dense 2-D / 3-D, channels-last and first */
    "fwd 2d Ci=8 Co=8 g=8 I=5,9 K=3,3 S=1," P62 " P0=1,1 P1=1," P62 " x=cl w=cl",
    "fwd 2d Ci=8 Co=8 g=8 I=5,9 K=3,3 S=1," Q63 " P0=1,1 P1=1," Q63,
    "fwd 2d Ci=8 Co=8 g=4 I=5,9 K=3,3 S=1," P62 " P0=1,1 P1=1," P62 " x=cl w=cl",
    "fwd 2d Ci=8 Co=8 g=4 I=5,9 K=3,3 S=1," Q63 " P0=1,1 P1=1," Q63,
    "fwd 2d Ci=3 Co=8 I=6,9 K=3,3 S=2," P62 " P0=1,1 P1=1," P62,
    "fwd 2d Ci=3 Co=8 I=6,9 K=3,3 S=2," Q63 " P0=1,1 P1=1," Q63 " x=cl w=cl",
    "fwd 3d Ci=8 Co=8 g=8 I=3,4,9 K=2,2,3 S=1,1," P62 " P0=0,0,1 P1=0,0," P62 " x=cl w=cl",
    "fwd 2d Ci=16 Co=16 I=4,9 K=1,3 S=1," Q63 " P0=0,1 P1=0," Q63 " x=cl w=cl",
    /* 32-bit indices, but a padded row's origin times x's stride past int32: the implicit
     * GEMM's incremental vector loader must not form that base (it gathers instead) */
    "fwd 1d Ci=8 Co=8 I=4 K=3 P0=300000000 P1=-300000000 x=cl w=cl",
    "tr 1d Ci=8 Co=8 I=4 K=3 P0=300000000 P1=-299999996 x=cl w=cl",
    /* transposed: a dilation of 2^62 cropped back by a padding of 2^62 */
    "tr 1d Ci=4 Co=4 I=2 K=2 D=" P62 " P0=" P62,
    "tr 2d Ci=8 Co=8 g=8 I=3,2 K=2,2 D=1," P62 " P0=0," P62,
};

/* Every schedule:config that supports text in dtype, except those whose name contains skip
 * (NULL: none). */
static void run_supporting_but(const char *text, convnd_dtype dtype, const char *skip) {
    convnd_problem p = test_parse_valid(text);
    p.dtype = dtype;
    if (dtype == CONVND_F32) p.math = CONVND_MATH_DEFAULT;
    char specs[64][TEST_SPEC_LEN];
    const int n = test_supporting_specs(&p, specs, 64);
    cr_expect(n > 0 || dtype != CONVND_F32, "no schedule supports %s", text);
    for (int i = 0; i < n; ++i)
        if (!skip || !strstr(specs[i], skip))
            test_run_supported_case(specs[i], &p, text, 0, test_seed_of(text, (uint64_t)dtype));
}

static void run_every_supporting(const char *text, convnd_dtype dtype) {
    run_supporting_but(text, dtype, NULL);
}

Test(extreme_geometry, huge_strides_dilations_and_paddings) {
    for (size_t i = 0; i < sizeof extreme / sizeof extreme[0]; ++i) {
        run_every_supporting(extreme[i], CONVND_F32);
        run_every_supporting(extreme[i], CONVND_F16);
    }
}

/* ---- item 9: named cases ------------------------------------------------------------------- */

Test(extreme_geometry, depthwise_3d_channels_last_with_a_depth_stride) {
    static const char *const cases[] = {
        "fwd 3d Ci=8 Co=8 g=8 I=5,4,9 K=2,3,3 S=2,1,1 P0=0,1,1 P1=0,1,1 x=cl w=cl",
        "fwd 3d Ci=12 Co=12 g=12 I=7,3,6 K=3,2,3 S=3,1,2 D=2,1,1 x=cl w=cl y=cl bias",
    };
    /* The 256-thread 64-deep tensor-core tiles (x64_s4) are most of this test's time on the
     * emulated device (a 128x256 tile per group of one channel; 4x longer under ASan than the
     * suite's timeout allows on a loaded machine); the forced-schedule suite runs them. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        run_supporting_but(cases[i], CONVND_F32, "x64_s4");
        run_supporting_but(cases[i], CONVND_BF16, "x64_s4");
    }
}

Test(extreme_geometry, grouped_with_whole_vectors_of_c_in_but_not_of_c_in_per_group) {
    /* f32 vectors of 4 (f16: 8): C_in = 8 (16) is whole vectors, C_in/groups = 2 is not */
    run_every_supporting("fwd 2d N=2 Ci=8 Co=8 g=4 I=5,6 K=3,3 P0=1 P1=1 x=cl w=cl", CONVND_F32);
    run_every_supporting("fwd 2d N=2 Ci=16 Co=16 g=8 I=5,6 K=3,3 P0=1 P1=1 x=cl w=cl", CONVND_F16);
    run_every_supporting("fwd 1d N=1 Ci=24 Co=12 g=4 I=11 K=3 S=2 x=cl w=cl y=cl", CONVND_F32);
}

/* x of 8 channels x (2^29 + 5) positions: 2^32 + 40 elements, mapped without backing, of which
 * only the 72 the conv reads are written; three outputs per channel (P1 chosen so), stride S
 * apart, the first at position -P0. Channels-first, channel 7 starts past 2^31 (x's base offset
 * needs 64 bits); channels-last, the W stride times the position does. Inputs and weights are
 * small integers and every sum stays below 2^8, so f32, f16 and bf16 results are exact. */
static void sparse_run_dtype(convnd_layout layout, int64_t S, int64_t P0, int64_t P1,
                             convnd_dtype dtype) {
    if (convnd_active_device() != CONVND_DEVICE_EMULATED)
        cr_skip_test("the sparse mapping is host memory: emulated device only");
    const int64_t C = 8, I = ((int64_t)1 << 29) + 5, K = 3, O = 3;
    const size_t elem = dtype == CONVND_F32 ? 4 : 2;
    const size_t xbytes = (size_t)(C * I) * elem;
    void *x = mmap(NULL, xbytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (x == MAP_FAILED) cr_skip_test("cannot map %zu bytes of address space", xbytes);
    const int cl = layout == CONVND_CHANNELS_LAST;
    float w[8 * 3], y[8 * 3], expect[8 * 3];
    for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < K; ++k)
            convnd_ref_store(dtype, w, c * K + k, (double)((c + 2 * k) % 5 - 2));
    for (int64_t c = 0; c < C; ++c)
        for (int64_t o = 0; o < O; ++o) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) {
                const int64_t i = o * S + k - P0;
                const double v = (double)((c * 7 + i % 97) % 9 - 4); /* of i: outputs share x */
                convnd_ref_store(dtype, x, cl ? i * C + c : c * I + i, v);
                acc += v * (double)((c + 2 * k) % 5 - 2);
            }
            expect[cl ? o * C + c : c * O + o] = (float)acc;
        }
    char text[256];
    snprintf(text, sizeof text,
             "fwd 1d Ci=8 Co=8 g=8 I=%lld K=3 S=%lld P0=%lld P1=%lld x=%s w=%s y=%s %s",
             (long long)I, (long long)S, (long long)P0, (long long)P1, cl ? "cl" : "cf",
             cl ? "cl" : "cf", cl ? "cl" : "cf",
             dtype == CONVND_BF16  ? "bf16"
             : dtype == CONVND_F16 ? "f16"
                                   : "f32");
    const convnd_problem p = test_parse_valid(text);
    char specs[64][TEST_SPEC_LEN];
    const int n = test_supporting_specs(&p, specs, 64);
    cr_expect(n > 0, "no schedule supports %s", text);
    for (int s = 0; s < n; ++s) {
        convnd_options opts = {0};
        opts.schedule = specs[s];
        size_t ws = 0;
        cr_assert_eq(convnd_workspace_size(&p, &opts, &ws), CONVND_OK, "%s", convnd_last_error());
        if (ws > 0) continue; /* a workspace sized by x (im2col) is not sparse */
        memset(y, 0xff, sizeof y);
        const convnd_status st = conv_nd(&p, x, w, NULL, NULL, y, NULL, 0, NULL, &opts);
        cr_expect_eq(st, CONVND_OK, "%s on %s: %s", specs[s], text, convnd_last_error());
        for (int e = 0; e < 24 && st == CONVND_OK; ++e) {
            const double got = convnd_ref_load(dtype, y, e);
            cr_expect_eq(got, (double)expect[e], "%s on %s: y[%d] = %g, expected %g", specs[s],
                         text, e, got, (double)expect[e]);
        }
    }
    munmap(x, xbytes);
}

static void sparse_run(convnd_layout layout, int64_t S, int64_t P0, int64_t P1) {
    sparse_run_dtype(layout, S, P0, P1, CONVND_F32);
}

Test(extreme_geometry, sparse_x_past_2_31_elements_channels_first) {
    sparse_run(CONVND_CHANNELS_FIRST, (int64_t)1 << 28, 0, 0);
}

Test(extreme_geometry, sparse_x_past_2_31_elements_channels_last) {
    sparse_run(CONVND_CHANNELS_LAST, (int64_t)1 << 28, 0, 0);
}

/* Stride 1, the input cropped to its last 5 positions by a negative padding: the unit-stride
 * kernels (the fixed-width rows of depthwise_cl among them) read past 2^31 elements too. */
Test(extreme_geometry, sparse_x_past_2_31_elements_unit_stride_cropped) {
    sparse_run(CONVND_CHANNELS_LAST, 1, -((int64_t)1 << 29), 0);
    sparse_run(CONVND_CHANNELS_FIRST, 1, -((int64_t)1 << 29), 0);
}

/* The same in bf16: 8 channels are one 16-byte vector, so depthwise_cl's 8-output 16-bit
 * fixed-width kernels (the two-halves path, 64-bit indices) read past 2^31 elements. */
Test(extreme_geometry, sparse_x_past_2_31_elements_unit_stride_cropped_bf16) {
    sparse_run_dtype(CONVND_CHANNELS_LAST, 1, -((int64_t)1 << 29), 0, CONVND_BF16);
}

/* Stride 2^28 in bf16: depthwise_cl's generic row (no fixed width for a stride > 1) in two
 * halves of 4 channels (8 outputs, 64-bit indices) reads past 2^31 elements. */
Test(extreme_geometry, sparse_x_past_2_31_elements_channels_last_bf16) {
    sparse_run_dtype(CONVND_CHANNELS_LAST, (int64_t)1 << 28, 0, 0, CONVND_BF16);
}
