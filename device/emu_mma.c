/* The arithmetic of the emulated mma.sync (mma_sync_emu.cuh): D = A*B + C on f32 tiles, each
 * element accumulated with fmaf in increasing k (exact fused multiply-adds, one fixed order).
 *
 * Built for two targets, picked at load time: with FMA instructions where the CPU has them (the
 * compiler then inlines and vectorizes fmaf), and a baseline x86-64 one that calls libm's fmaf.
 * Both give the same bits; the first is an order of magnitude faster, and mma_sync is most of
 * the emulated tensor-core kernels' time. */
#include <math.h>

#include "emu.h"

/* Not with clang: clang 14 emits only the suffixed clones and no plain symbol (link error). Not
 * under ThreadSanitizer: the clone resolver runs during relocation, before TSan's runtime is up,
 * and its instrumented entry crashes. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) &&                  \
    !defined(__SANITIZE_THREAD__) && !defined(__clang__)
#define CONVND_EMU_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define CONVND_EMU_FMA_CLONES
#endif

/* One row of d; N known at compile time lets the compiler vectorize over j. */
#define MMA_ROW(N)                                                                                 \
    do {                                                                                           \
        float row[N];                                                                              \
        for (int j = 0; j < (N); ++j)                                                              \
            row[j] = c[i * (N) + j];                                                               \
        for (int kk = 0; kk < k; ++kk) {                                                           \
            const float av = a[i * k + kk];                                                        \
            const float *brow = b + kk * (N);                                                      \
            for (int j = 0; j < (N); ++j)                                                          \
                row[j] = fmaf(av, brow[j], row[j]);                                                \
        }                                                                                          \
        for (int j = 0; j < (N); ++j)                                                              \
            d[i * (N) + j] = row[j];                                                               \
    } while (0)

CONVND_EMU_FMA_CLONES
void convnd_emu_mma_f32(int m, int n, int k, const float *a, const float *b, const float *c,
                        float *d) {
    for (int i = 0; i < m; ++i) {
        if (n == 16)
            MMA_ROW(16);
        else if (n == 8)
            MMA_ROW(8);
        else if (n == 32)
            MMA_ROW(32);
        else
            MMA_ROW(n);
    }
}
