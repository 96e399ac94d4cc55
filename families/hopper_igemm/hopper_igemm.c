/* Registry entry of the Hopper tier (families/hopper_igemm/hopper_igemm.cu): warp-specialized wgmma
 * + TMA implicit GEMM, forward and transposed convolution, on sm_90a (compute capability 9.0) or
 * the emulated device.
 *
 * Domain (each limit refused by name in supports()): groups = 1, x, w and y channels-last,
 * f16 / bf16 (forward also f32 with CONVND_MATH_ALLOW_TF32), C_in and C_out whole 16-byte rows
 * (TMA global strides), 32-bit indices, and per mode:
 *  - forward: non-negative padding, stride <= 8 (the im2col traversal stride), the im2col
 *    bounding-box corners within the tensor map's signed field of the rank (16 bits for 1-D, 8
 *    for 2-D, 5 for 3-D convolutions) and the dilated filter extent below 65536 / 256 / 32;
 *  - transposed (one forward view per output phase, families/igemm/convT_phase.h): strides and
 * phase count within convT's limits (families/igemm/convT_limits.h: convT_tc takes misaligned
 * pointers), and for every phase that some tap reaches, its corners (-P0', O_r - 1 - P0' - (I - 1))
 *    and its dilated tap extent (T - 1) * D' within the same fields. Phases no tap reaches need
 *    no map. f32 is refused: the transposed weight reaches wgmma MN-major, which .tf32 lacks.
 * Everything else stays on igemm_tc / igemm_simt / convT_tc / convT_simt.
 *
 * Heuristic (worth_routing): only on a GPU of compute capability 9.0, for GEMM-shaped problems
 * big enough to fill the persistent grid: C_in >= 64, C_out >= 64, at least one tile per SM
 * (132 on an H200; transposed: per output phase, so a large upsampling conv routes here ahead
 * of convT_tc);
 * 128x256 when C_out > 128, else 128x128. */
#include "arch.h"
#include "gemm_family.h"
#include "gemm_tiles.h"
#include "registry.h"
#include "refuse.h"
#include "problem_internal.h"
#include "hopper_igemm.h"
#include "convT_limits.h"
#include "convT_phase.h"

#include <stdint.h>
#include <stdio.h>

#ifdef CONVND_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define HOPPER_NAME(e, name, bn, stages) name,
static const char *const hopper_names[CONVND_HOPPER_COUNT] = {CONVND_HOPPER_CONFIGS(HOPPER_NAME)};
#undef HOPPER_NAME

/* 1 on the emulated device or an sm_90 GPU; else 0 and the reason. */
static int32_t hopper_device_ok(char *reason, size_t reason_len) {
    if (convnd_active_device() != CONVND_DEVICE_GPU) return 1;
#ifdef CONVND_HAVE_CUDA
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
        major == 9 && minor == 0)
        return 1;
    (void)cudaGetLastError();
    return convnd_refuse(reason, reason_len,
                         "compute capability %d.%d: wgmma and TMA need the sm_90a image "
                         "(compute capability 9.0)",
                         major, minor);
#else
    return convnd_refuse(reason, reason_len, "built without CUDA: no sm_90a image");
#endif
}

/* The im2col map's signed corner fields and offset reach for a d-D convolution: 16 bits for
 * 1-D, 8 for 2-D, 5 for 3-D (CUTLASS's can_implement: filter extent below 65536 / 256 / 32). */
typedef struct hopper_fields {
    int32_t bits;
    int64_t lo, hi, reach;
} hopper_fields;

static hopper_fields hopper_fields_of(int32_t dims) {
    hopper_fields f;
    f.bits = dims == 1 ? 16 : dims == 2 ? 8 : 5;
    f.lo = -(1ll << (f.bits - 1));
    f.hi = (1ll << (f.bits - 1)) - 1;
    f.reach = 2 * (f.hi + 1);
    return f;
}

/* 1 when an im2col map of dim d with these corners and tap extent can be encoded; else 0 and
 * the reason. phase: the transposed output phase (o mod S = phase) or -1 (forward). */
static int32_t hopper_map_fits(const convnd_conv_params *params, int32_t d, int64_t lower,
                               int64_t upper, int64_t extent, int64_t phase, char *reason,
                               size_t reason_len) {
    const hopper_fields f = hopper_fields_of(params->dims);
    char at[48] = "";
    if (phase >= 0) snprintf(at, sizeof at, ", output phase %lld", (long long)phase);
    if (extent >= f.reach)
        return convnd_refuse(reason, reason_len,
                             "dilated filter extent %lld in dim %d%s: im2col offsets of a "
                             "%d-D convolution reach below %lld",
                             (long long)extent, d, at, params->dims, (long long)f.reach);
    if (lower < f.lo || lower > f.hi || upper < f.lo || upper > f.hi)
        return convnd_refuse(reason, reason_len,
                             "im2col corners %lld/%lld in dim %d%s outside [%lld, %lld] (%d-bit "
                             "fields for a %d-D convolution)",
                             (long long)lower, (long long)upper, d, at, (long long)f.lo,
                             (long long)f.hi, f.bits, params->dims);
    return 1;
}

/* x's own extent along padded dim t (params->in counts a prefix and a suffix as well, SPEC §12,
 * §14). */
static int64_t hopper_x_extent(const convnd_conv_params *params, int32_t t) {
    return params->in[t] - (t == params->io_dim ? params->prefix_len + params->suffix_len : 0);
}

static int32_t hopper_forward_fits(const convnd_conv_params *params, char *reason,
                                   size_t reason_len) {
    for (int32_t d = 0; d < params->dims; ++d) {
        const int32_t t = 3 - params->dims + d; /* the problem's dim d, padded */
        if (params->p0[t] < 0 || params->p1[t] < 0)
            return convnd_refuse(reason, reason_len,
                                 "padding[%d]=%lld/%lld: negative padding (cropping) is not a "
                                 "TMA bounding box",
                                 d, (long long)params->p0[t], (long long)params->p1[t]);
        if (params->s[t] > 8)
            return convnd_refuse(reason, reason_len,
                                 "stride[%d]=%lld: the im2col traversal stride is at most 8", d,
                                 (long long)params->s[t]);
        const int64_t upper =
            (params->out[t] - 1) * params->s[t] - params->p0[t] - (hopper_x_extent(params, t) - 1);
        if (!hopper_map_fits(params, d, -params->p0[t], upper, (params->k[t] - 1) * params->d[t],
                             -1, reason, reason_len))
            return 0;
    }
    return 1;
}

/* Every phase some tap reaches gets an im2col map of a stride-1 forward view (convT_phase.h). */
static int32_t hopper_transposed_fits(const convnd_conv_params *params, char *reason,
                                      size_t reason_len) {
    int64_t phases = 1;
    for (int32_t d = 0; d < params->dims; ++d) {
        const int64_t stride = params->s[3 - params->dims + d];
        if (stride > CONVND_CONVT_MAX_STRIDE)
            return convnd_refuse(reason, reason_len,
                                 "stride[%d]=%lld: transposed strides above %d (convT's limit: "
                                 "convT_tc runs misaligned pointers)",
                                 d, (long long)stride, CONVND_CONVT_MAX_STRIDE);
        phases *= stride;
    }
    if (phases > CONVND_CONVT_MAX_PHASES)
        return convnd_refuse(reason, reason_len,
                             "%lld output phases: more than %d (convT's limit: convT_tc runs "
                             "misaligned pointers)",
                             (long long)phases, CONVND_CONVT_MAX_PHASES);
    for (int32_t d = 0; d < params->dims; ++d) {
        const int32_t t = 3 - params->dims + d; /* the problem's dim d, padded */
        for (int64_t r = 0; r < params->s[t]; ++r) {
            const convnd_convT_dim e = convnd_convT_dim_phase(
                params->s[t], params->d[t], params->k[t], params->p0[t], params->out[t], r);
            if (e.O == 0 || e.T == 0) continue; /* no outputs, or no map to encode */
            if (!hopper_map_fits(params, d, -e.P0,
                                 e.O - 1 - e.P0 - (hopper_x_extent(params, t) - 1), (e.T - 1) * e.D,
                                 r, reason, reason_len))
                return 0;
        }
    }
    return 1;
}

/* The name of a resolved layout from its channels-last flag (x_cl, w_cl, y_cl). */
static const char *hopper_layout_name(int32_t channels_last) {
    return convnd_layout_name(channels_last ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST);
}

static int32_t hopper_supports(const convnd_gemm_family *f, convnd_gemm_variant v,
                               const convnd_conv_params *params, int32_t config, char *reason,
                               size_t reason_len) {
    (void)f, (void)v, (void)config;
    if (params->mode != CONVND_FORWARD && params->mode != CONVND_TRANSPOSED)
        return convnd_refuse(reason, reason_len,
                             "mode=%s: the Hopper tier implements forward and transposed "
                             "convolution",
                             convnd_mode_name((convnd_mode)params->mode));
    if (params->mode == CONVND_TRANSPOSED && params->dtype == CONVND_F32)
        return convnd_refuse(reason, reason_len,
                             "dtype=f32 in transposed mode: the transposed weight "
                             "[C_in][K...][C_out] reaches wgmma MN-major, and .tf32 wgmma takes "
                             "K-major operands only");
    if (params->dtype == CONVND_F32 && !params->allow_tf32)
        return convnd_refuse(reason, reason_len,
                             "dtype=f32 needs math=allow_tf32 (wgmma has no exact-f32 mode)");
    if (params->N == 0 || params->C_in == 0 || params->C_out == 0)
        return convnd_refuse(
            reason, reason_len, "N=%lld, C_in=%lld, C_out=%lld: no GEMM to run (zero size)",
            (long long)params->N, (long long)params->C_in, (long long)params->C_out);
    if (params->groups != 1)
        return convnd_refuse(reason, reason_len, "groups=%lld: only groups=1 (dense GEMM)",
                             (long long)params->groups);
    if (!params->x_cl || !params->w_cl || !params->y_cl)
        return convnd_refuse(reason, reason_len,
                             "layouts x=%s w=%s y=%s: TMA im2col needs channels-last x, w and y",
                             hopper_layout_name(params->x_cl), hopper_layout_name(params->w_cl),
                             hopper_layout_name(params->y_cl));
    const int64_t es = convnd_dtype_bytes((convnd_dtype)params->dtype);
    if ((params->C_in * es) % 16 || (params->C_out * es) % 16)
        return convnd_refuse(reason, reason_len,
                             "C_in=%lld, C_out=%lld: rows of %lld and %lld bytes are not whole "
                             "16-byte units (TMA global strides)",
                             (long long)params->C_in, (long long)params->C_out,
                             (long long)(params->C_in * es), (long long)(params->C_out * es));
    if (params->mode == CONVND_TRANSPOSED ? !hopper_transposed_fits(params, reason, reason_len)
                                          : !hopper_forward_fits(params, reason, reason_len))
        return 0;
    if (params->x_numel >= INT32_MAX || params->y_numel >= INT32_MAX ||
        params->w_numel >= INT32_MAX)
        return convnd_refuse(reason, reason_len,
                             "tensors of 2^31 elements or more: TMA coordinates are 32-bit");
    return hopper_device_ok(reason, reason_len);
}

static int32_t hopper_worth_routing(const convnd_gemm_family *f, convnd_gemm_variant v,
                                    const convnd_conv_params *params, int32_t config) {
    (void)f, (void)v;
    if (convnd_active_device() != CONVND_DEVICE_GPU) return 0;
    int64_t m = params->N * params->out[0] * params->out[1] * params->out[2];
    /* transposed: one launch per phase, each of about m / prod(S) rows, should fill the GPU */
    if (params->mode == CONVND_TRANSPOSED) m /= params->s[0] * params->s[1] * params->s[2];
    const int64_t bn = convnd_hopper_bn(config);
    const int64_t tiles =
        (m + CONVND_HOPPER_BM - 1) / CONVND_HOPPER_BM * ((params->C_out + bn - 1) / bn);
    const int32_t wide = params->C_out > 128;
    return params->C_in >= 64 && params->C_out >= 64 && tiles >= convnd_device_sm_count() &&
           (config == CONVND_HOPPER_128x256) == wide;
}

/* TMA needs 16-byte aligned tensors: element-aligned pointers that are not (valid in the API)
 * run on igemm_tc's (transposed: convT_tc's) largest configuration that fits the device
 * instead, which handles any alignment. */
static convnd_status hopper_launch(const convnd_gemm_family *f, convnd_gemm_variant v,
                                   const convnd_launch_args *a) {
    if (((uintptr_t)a->x | (uintptr_t)a->w | (uintptr_t)a->y) % 16) {
        convnd_launch_args b = *a;
        b.config = convnd_gemm_tc_first_fitting((convnd_dtype)a->params.dtype);
        return a->params.mode == CONVND_TRANSPOSED ? convnd_schedule_convT_tc.launch(&b)
                                                   : convnd_schedule_igemm_tc.launch(&b);
    }
    return CONVND_LAUNCH(&f->kernels[v][0], a); /* one kernel for every dtype */
}

CONVND_DECLARE_LAUNCHER(hopper_igemm);
static const convnd_gemm_family hopper_family = {
    .names = {"hopper_igemm", NULL},
    .kernels = {CONVND_GEMM_KERNEL_EVERY_DTYPE(hopper_igemm)},
    .supports = hopper_supports,
    .worth_routing = hopper_worth_routing,
    .launch = hopper_launch,
};

CONVND_GEMM_FAMILY_SCHEDULE(
    hopper_igemm, hopper_family, TC, CONVND_HOPPER_COUNT, hopper_names,
    "the Hopper tier (sm_90a): warp-specialized implicit GEMM on TMA, an "
    "mbarrier ring and wgmma; forward and transposed",
    "families/hopper_igemm/hopper_igemm.c, families/hopper_igemm/hopper_igemm.cu",
    CONVND_NEEDS_SM90A, 0);
