/* The measured ceilings that "% of peak" refers to, measured once per run on the GPU:
 * a device-to-device copy (bytes read + written per second) and cuBLAS GEMMs of 8192^3 on
 * random data (bf16 on tensor cores with f32 accumulation, and f32 with FMA math). */
#ifndef CONVND_BENCH_CEILINGS_H
#define CONVND_BENCH_CEILINGS_H

#include <stdint.h>
#include "convnd.h"

typedef struct bench_ceilings {
    int32_t measured;        /* 0 on the emulated device: every "%" is n/a */
    double copy_gbps;        /* GB/s, read + write */
    double gemm_bf16_tflops; /* TFLOP/s */
    double gemm_f32_tflops;
} bench_ceilings;

/* Measures on the GPU (a few hundred ms). On the emulated device sets measured = 0 and
 * returns CONVND_OK. */
convnd_status bench_measure_ceilings(bench_ceilings *c);

/* The compute ceiling that applies to a problem's dtype (f32 problems: the f32 GEMM). */
double bench_compute_ceiling(const bench_ceilings *c, convnd_dtype dtype);

#endif
