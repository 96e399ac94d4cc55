/* The feature table: one case per SPEC feature, shared by the forced-schedule suite and the
 * differential fuzzer's seeds (tests/fuzz/fuzz_kernels.c). */
#include "test_feature_table.h"

const test_case_text test_feature_table[] = {
    /* 1-D (NCL and NLC) */
    {"1d_basic", "fwd 1d N=2 Ci=3 Co=5 I=17 K=3 P0=1 P1=1", 0},
    {"1d_even_stride3_dil2", "fwd 1d Ci=4 Co=3 I=29 K=4 S=3 D=2 P0=2 P1=1", 0},
    {"1d_causal_nlc", "fwd 1d Ci=5 Co=7 I=20 K=3 D=2 P0=4 P1=0 x=cl w=cl", 0},
    {"1d_negative_pad", "fwd 1d Ci=3 Co=2 I=19 K=2 S=2 P0=-2 P1=-1", 0},
    {"1d_tr_basic", "tr 1d N=2 Ci=3 Co=5 I=9 K=3 S=2 P0=1 P1=1", 0},
    {"1d_tr_output_padding", "tr 1d Ci=4 Co=3 I=8 K=4 S=3 P0=1 P1=-1", 0},
    {"1d_tr_extension_dil3", "tr 1d Ci=2 Co=3 I=5 K=2 S=2 D=3 P0=0 P1=-3 x=cl w=cl", 0},
    {"1d_depthwise_causal_nlc",
     "fwd 1d N=2 Ci=6 Co=6 g=6 I=20 K=4 P0=3 P1=0 x=cl w=cl bias act=silu", 0},
    {"1d_depthwise_mult2_dil2", "fwd 1d Ci=5 Co=10 g=5 I=17 K=3 D=2 P0=2 P1=2", 0},
    {"1d_depthwise_bf16_long", "fwd 1d Ci=8 Co=8 g=8 I=70 K=4 P0=3 P1=0 bf16 x=cl w=cl", 0},
    /* 2-D: padding, stride, dilation, even kernels */
    {"2d_same_3x3_bias", "fwd 2d N=2 Ci=3 Co=5 I=9,8 K=3 P0=1 P1=1 bias", 0},
    {"2d_same_even_kernel", "fwd 2d Ci=5 Co=4 I=8,7 K=4,2 P0=1,0 P1=2,1", 0},
    {"2d_asym_downsample", "fwd 2d N=2 Ci=4 Co=6 I=11,10 K=3 S=2 P0=0 P1=1", 0},
    {"2d_stride3_dil3", "fwd 2d Ci=3 Co=3 I=16,15 K=3,2 S=3,2 D=3,2 P0=2,1 P1=0,3", 0},
    {"2d_negative_pad", "fwd 2d Ci=3 Co=4 I=10,9 K=3 P0=-1,-2 P1=-2,1", 0},
    {"2d_pointwise", "fwd 2d N=2 Ci=7 Co=5 I=6,5 K=1", 0},
    {"2d_pointwise_s2_cl", "fwd 2d Ci=5 Co=3 I=9,8 K=1 S=2 x=cl w=cl", 0},
    /* groups */
    {"2d_groups3", "fwd 2d N=2 Ci=6 Co=9 g=3 I=7 K=3 P0=1 P1=1", 0},
    {"2d_depthwise_s2_cl", "fwd 2d Ci=7 Co=7 g=7 I=9,8 K=3 S=2 P0=1 P1=1 x=cl w=cl", 0},
    {"2d_depthwise_mult2_5x5", "fwd 2d Ci=5 Co=10 g=5 I=8 K=5 P0=2 P1=2", 0},
    /* layouts, including mixed x/w layouts and an explicit y layout */
    {"2d_channels_last", "fwd 2d N=2 Ci=5 Co=7 I=7,6 K=3 P0=1 P1=1 x=cl w=cl", 0},
    {"2d_x_cl_w_cf", "fwd 2d Ci=3 Co=5 I=6 K=3 x=cl w=cf", 0},
    {"2d_x_cf_w_cl_y_cf", "fwd 2d Ci=3 Co=5 I=6,7 K=3,2 x=cf w=cl y=cf", 0},
    {"2d_cf_to_y_cl", "fwd 2d N=2 Ci=5 Co=3 I=5,6 K=3 P0=1 P1=0 y=cl", 0},
    /* transposed 2-D */
    {"2d_tr_output_padding", "tr 2d N=2 Ci=4 Co=3 I=5,4 K=3 S=2 P0=1 P1=0", 0},
    {"2d_tr_groups_dil", "tr 2d Ci=6 Co=4 g=2 I=4,5 K=3,2 S=2,3 D=2,1 P0=1,0 P1=-1,2", 0},
    {"2d_tr_channels_last", "tr 2d Ci=5 Co=6 I=5 K=4 S=2 P0=1 P1=1 x=cl w=cl", 0},
    {"2d_tr_depthwise", "tr 2d Ci=4 Co=4 g=4 I=5 K=3 S=2 P0=1 P1=0", 0},
    {"2d_tr_negative_pad", "tr 2d Ci=3 Co=2 I=4 K=3 P0=-1 P1=-2", 0},
    {"2d_tr_mixed_layouts", "tr 2d Ci=3 Co=5 I=4,3 K=2,3 S=3,1 x=cf w=cl y=cl", 0},
    /* 3-D */
    {"3d_basic", "fwd 3d Ci=3 Co=4 I=5,6,5 K=3 P0=1 P1=1", 0},
    {"3d_causal_time_cl", "fwd 3d Ci=4 Co=3 I=4,5,5 K=3 P0=2,1,1 P1=0,1,1 x=cl w=cl", 0},
    {"3d_stride_dil_groups",
     "fwd 3d N=2 Ci=4 Co=6 g=2 I=5,6,7 K=2,3,3 S=2,1,2 D=1,2,1 P0=0,1,-1 P1=1,1,0", 0},
    {"3d_tr_basic", "tr 3d Ci=3 Co=2 I=3,4,3 K=3,2,3 S=2 P0=1 P1=0,-1,1", 0},
    {"3d_tr_groups_cl", "tr 3d Ci=4 Co=4 g=2 I=3 K=2 S=2 x=cl w=cl", 0},
    /* transposed, for the phase decomposition (convT_*): stride 4 with a long dilated kernel,
     * dilation sharing a factor with the stride (phases without taps), 3-D with 8 phases */
    {"1d_tr_s4_k16_dil3", "tr 1d N=2 Ci=8 Co=6 I=7 K=16 S=4 D=3 P0=5 P1=-3", 0},
    {"2d_tr_s4_dil2_gcd_cl",
     "tr 2d Ci=8 Co=8 I=4,5 K=5,3 S=4,2 D=2,1 P0=-1,1 P1=-3,0 x=cl w=cl bias", 0},
    {"3d_tr_s4_f16_cl", "tr 3d Ci=8 Co=8 I=2,3,2 K=4,3,2 S=4,2,1 P0=1 P1=0 f16 x=cl w=cl", 0},
    /* dtypes */
    {"2d_f16_bias", "fwd 2d N=2 Ci=5 Co=6 I=7,6 K=3 P0=1 P1=1 f16 bias", 0},
    {"2d_bf16_cl", "fwd 2d Ci=7 Co=5 I=6 K=3 S=2 P0=1 P1=0 bf16 x=cl w=cl bias", 0},
    {"2d_tr_f16", "tr 2d Ci=3 Co=5 I=4,5 K=3 S=2 P0=1 P1=0 f16", 0},
    {"3d_bf16", "fwd 3d Ci=3 Co=3 I=4,5,4 K=2,3,3 P0=0,1,1 P1=1,1,1 bf16", 0},
    {"1d_tr_bf16_cl", "tr 1d Ci=5 Co=3 I=7 K=3 S=2 P0=0 P1=-1 bf16 x=cl w=cl", 0},
    {"2d_f32_tf32_allowed", "fwd 2d N=2 Ci=8 Co=8 I=6 K=3 P0=1 P1=1 tf32", 0},
    /* epilogue */
    {"ep_alpha_beta_bias_z", "fwd 2d Ci=3 Co=4 I=6,5 K=3 P0=1 P1=1 bias z alpha=0.5 beta=0.75", 0},
    {"ep_relu", "fwd 2d Ci=4 Co=3 I=6 K=3 P0=1 P1=1 bias act=relu", 0},
    {"ep_silu_f16", "fwd 2d Ci=3 Co=5 I=5,6 K=3 f16 bias z beta=1 act=silu", 0},
    {"ep_gelu_bf16_cl", "fwd 1d Ci=5 Co=6 I=12 K=3 P0=2 P1=0 bf16 x=cl w=cl bias act=gelu", 0},
    {"ep_tr_all", "tr 2d Ci=4 Co=3 I=4 K=3 S=2 P0=1 P1=0 bias z alpha=1.5 beta=-0.5 act=gelu", 0},
    {"ep_in_place_residual", "fwd 2d N=2 Ci=3 Co=5 I=6 K=3 P0=1 P1=1 bias z beta=1", 1},
    {"ep_in_place_f16_gelu", "fwd 2d Ci=5 Co=3 I=5 K=3 P0=1 P1=1 f16 z beta=0.5 act=gelu", 1},
    {"ep_in_place_tr_cl", "tr 2d Ci=3 Co=4 I=4 K=2 S=2 x=cl w=cl bias z beta=1 act=relu", 1},
    /* depthwise: multipliers, odd channel counts, W tails, 16-byte vector paths, causal 1-D,
     * large kernels; grouped with 2..16 channels per group; stems (C_in 1 and 3) */
    {"dw_1d_causal_long_cl", "fwd 1d N=2 Ci=12 Co=12 g=12 I=70 K=4 P0=3 P1=0 x=cl w=cl bias", 0},
    {"dw_1d_causal_dil_bf16_odd",
     "fwd 1d Ci=9 Co=9 g=9 I=50 K=3 D=2 P0=4 P1=0 bf16 x=cl w=cl z beta=1 act=silu", 0},
    {"dw_1d_causal_cf_mult2", "fwd 1d Ci=5 Co=10 g=5 I=40 K=4 P0=3 P1=0 bias", 0},
    {"dw_1d_stride2_f16_cl", "fwd 1d Ci=16 Co=16 g=16 I=33 K=3 S=2 P0=1 P1=-1 f16 x=cl w=cl", 0},
    {"dw_2d_mult2_cl_tail", "fwd 2d N=2 Ci=6 Co=12 g=6 I=9,11 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    {"dw_2d_f16_vec_s2_relu",
     "fwd 2d N=2 Ci=16 Co=16 g=16 I=10,13 K=3 S=2 P0=1 P1=1 f16 x=cl w=cl bias act=relu", 0},
    {"dw_2d_negative_pad_cl", "fwd 2d Ci=8 Co=8 g=8 I=11,12 K=3,5 S=1,2 P0=-1,-2 P1=2,-1 x=cl w=cl",
     0},
    {"dw_2d_dilated_cf", "fwd 2d Ci=5 Co=5 g=5 I=12,10 K=3 D=2,3 P0=2 P1=2 bias", 0},
    {"dw_2d_k7_bf16_cl_in_place",
     "fwd 2d Ci=24 Co=24 g=24 I=9,10 K=7 P0=3 P1=3 bf16 x=cl w=cl bias z beta=1", 1},
    {"dw_2d_k15_cl", "fwd 2d Ci=4 Co=4 g=4 I=9,10 K=15 P0=7 P1=7 x=cl w=cl", 0},
    {"dw_2d_k31_cf_bf16", "fwd 2d Ci=3 Co=3 g=3 I=6,7 K=31 P0=15 P1=15 bf16", 0},
    {"dw_3d_mult2_f16_cl", "fwd 3d Ci=3 Co=6 g=3 I=4,5,6 K=3 P0=1 P1=1 f16 x=cl w=cl", 0},
    {"dw_2d_mixed_layouts", "fwd 2d Ci=8 Co=8 g=8 I=7,9 K=3 S=2 P0=1 P1=0 x=cl w=cf y=cf", 0},
    {"grouped_cpg4_cl", "fwd 2d N=2 Ci=16 Co=16 g=4 I=7,9 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    {"grouped_cpg16_bf16_s2", "fwd 2d Ci=32 Co=32 g=2 I=6,5 K=3 S=2 P0=1 P1=0 bf16 x=cl w=cl", 0},
    {"grouped_cpg8_to_12_cf", "fwd 2d Ci=16 Co=24 g=2 I=6 K=3 P0=1 P1=1 act=gelu", 0},
    {"grouped_3d_f16", "fwd 3d Ci=10 Co=15 g=5 I=3,4,5 K=2,3,3 P0=0,1,1 P1=1 f16", 0},
    {"stem_c3_s2_bf16_cl",
     "fwd 2d N=2 Ci=3 Co=20 I=17,15 K=7 S=2 P0=3 P1=3 bf16 x=cl w=cl bias act=relu", 0},
    {"stem_c3_cf_co40", "fwd 2d Ci=3 Co=40 I=12,11 K=5 S=2 P0=2 P1=2 bias", 0},
    {"stem_1d_c1", "fwd 1d Ci=1 Co=6 I=45 K=9 S=3 P0=4 P1=4", 0},
    /* coordinates past int32 with small tensors: a 32-bit stride would wrap to 0 and read x */
    {"1d_stride_2pow32", "fwd 1d Ci=2 Co=3 I=10 K=3 S=4294967296 P0=0 P1=4294967296 bias", 0},
    {"1d_tr_stride_2pow32", "tr 1d Ci=2 Co=3 I=2 K=3 S=4294967296 P0=0 P1=4294967296", 0},
    {"2d_pad_3e9_crop", "fwd 2d Ci=3 Co=2 I=5,6 K=3 P0=3000000000,1 P1=-2999999998,1", 0},
    /* dense channels-last with channels in whole 16-byte rows: the domain of the Hopper tier
     * (TMA im2col; forward with padding >= 0, transposed in f16/bf16, one forward view per
     * output phase), which refuses most other rows of this table */
    {"tma_2d_bf16_cl_bias", "fwd 2d N=2 Ci=16 Co=24 I=7,6 K=3 P0=1 P1=1 bf16 x=cl w=cl bias", 0},
    {"tma_3d_f16_causal_cl",
     "fwd 3d Ci=8 Co=16 I=3,4,5 K=3 P0=2,1,1 P1=0,1,1 f16 x=cl w=cl z beta=1 act=silu", 0},
    {"tma_1d_tf32_cl_s2", "fwd 1d N=2 Ci=8 Co=12 I=20 K=3 S=2 P0=1 P1=0 tf32 x=cl w=cl", 0},
    {"tma_tr_2d_bf16_output_padding",
     "tr 2d N=2 Ci=16 Co=24 I=5,4 K=3 S=2 P0=1 P1=0 bf16 x=cl w=cl bias z beta=0.5 act=silu", 0},
    /* K < S with dilation: output phase 0 has no taps (epilogue only) */
    {"tma_tr_1d_f16_s3_empty_phase",
     "tr 1d Ci=8 Co=16 I=7 K=2 S=3 D=2 P0=1 P1=-2 f16 x=cl w=cl bias", 0},
    {"tma_tr_3d_bf16_in_place",
     "tr 3d Ci=8 Co=8 I=2,3,3 K=3 S=2,1,2 P0=1 P1=0 bf16 x=cl w=cl bias z beta=1 act=relu", 1},
    /* zero sizes */
    {"zero_batch", "fwd 2d N=0 Ci=3 Co=4 I=5 K=3", 0},
    {"zero_out_channels", "fwd 2d Ci=3 Co=0 I=5 K=3", 0},
    {"zero_in_channels_bias_only", "fwd 2d Ci=0 Co=3 I=5 K=3 bias", 0},
    {"zero_batch_tr", "tr 1d N=0 Ci=3 Co=4 I=5 K=3 S=2", 0},
};

const size_t test_feature_table_count = sizeof test_feature_table / sizeof test_feature_table[0];
