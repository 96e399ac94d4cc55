/* The emulated device's ldmatrix and mma.sync (see primitives/mma_sync.cuh for the interface and the
 * PTX ISA fragment tables they implement). Each is warp-collective like on a GPU: the last lane to
 * arrive does the whole warp's work from every lane's registers or row address, so a call from
 * part of a warp is reported, as is an ldmatrix row address outside the block's shared memory or
 * not 16-byte aligned. mma.sync accumulates in f32 with fmaf in increasing k (one fixed order,
 * device/emu_mma.c); tf32 inputs keep their top 19 bits, as the tensor core reads them. */
#ifndef CONVND_MMA_SYNC_EMU_CUH
#define CONVND_MMA_SYNC_EMU_CUH

namespace convnd_mma_emu {

inline void require_full_warp(uint32_t lanes, const char *name) {
    if (lanes != 0xFFFFFFFFu)
        convnd_emu_fail("%s needs all 32 lanes of a warp; this warp has lanes 0x%08x", name, lanes);
}

struct ldmatrix_arg {
    uint32_t *r;
    const void *row;
};

/* 16-bit element c (0..7) of the row lane `l` addressed. */
inline uint32_t row_element(void *const *args, uint32_t l, uint32_t c) {
    uint16_t v;
    memcpy(&v,
           static_cast<const unsigned char *>(static_cast<ldmatrix_arg *>(args[l])->row) + 2 * c,
           2);
    return v;
}

/* ldmatrix and stmatrix: lanes 0 .. 8*num-1 address one 16-byte row each, which must lie in the
 * block's shared memory, 16-byte aligned. row_of(l) is lane l's address. */
template <class RowOf>
inline void check_matrix_rows(const char *name, int num, uint32_t lanes, RowOf row_of) {
    require_full_warp(lanes, name);
    const convnd_emu_block *b = convnd_emu_self->block;
    const uintptr_t lo = (uintptr_t)b->smem, hi = lo + b->smem_used;
    for (uint32_t l = 0; l < 8 * (uint32_t)num; ++l) {
        const uintptr_t p = (uintptr_t)row_of(l);
        if (p < lo || p + 16 > hi)
            convnd_emu_fail("%s.x%d: lane %u's row address %p is not in the block's shared memory "
                            "[%p, %p)",
                            name, num, l, (const void *)p, (const void *)lo, (const void *)hi);
        if (p % 16)
            convnd_emu_fail("%s.x%d: lane %u's row address %p is not 16-byte aligned", name, num, l,
                            (const void *)p);
    }
}

template <int NUM, bool TRANS> void ldmatrix_all(void *const *args, uint32_t lanes) {
    static const char *const name = TRANS ? "ldmatrix.trans" : "ldmatrix";
    check_matrix_rows(name, NUM, lanes,
                      [&](uint32_t l) { return static_cast<ldmatrix_arg *>(args[l])->row; });
    /* Lane 4*row + w gets word w of each matrix's row `row` (TRANS: of its column `row`). */
    uint32_t out[CONVND_EMU_WARP][NUM];
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        for (int i = 0; i < NUM; ++i) {
            const uint32_t row = l / 4, w = l % 4;
            out[l][i] = TRANS ? row_element(args, 8 * i + 2 * w, row) |
                                    row_element(args, 8 * i + 2 * w + 1, row) << 16
                              : row_element(args, 8 * i + row, 2 * w) |
                                    row_element(args, 8 * i + row, 2 * w + 1) << 16;
        }
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        memcpy(static_cast<ldmatrix_arg *>(args[l])->r, out[l], sizeof out[l]);
}

struct mma_arg {
    float *d;
    const uint32_t *a, *b;
    const float *c;
};

template <typename T> inline float half_of(uint32_t reg, int h) {
    return convnd_to_f32(T{(uint16_t)(h ? reg >> 16 : reg & 0xFFFFu)});
}
inline float tf32_of(uint32_t reg) {
    return convnd_f32_from_bits(reg & ~0x1FFFu);
}

inline const mma_arg *lane_arg(void *const *args, uint32_t l) {
    return static_cast<const mma_arg *>(args[l]);
}

/* D = A*B + C on one warp's fragments, A 16 x K and B K x 8: fill(m, g, t, a, b) places lane
 * (g, t)'s A and B registers m into the row-major tiles; C and D (16x8 f32) are laid out the same
 * for both shapes, c[i] holding C[g + 8*(i>>1)][2t + (i&1)]. */
template <int K, class Fill>
void mma_warp(void *const *args, uint32_t lanes, const char *name, Fill fill) {
    require_full_warp(lanes, name);
    float a[16 * K], b[K * 8], c[16 * 8], d[16 * 8];
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        fill(lane_arg(args, l), l / 4, l % 4, a, b);
        for (int i = 0; i < 4; ++i)
            c[(l / 4 + 8 * (i >> 1)) * 8 + 2 * (l % 4) + (i & 1)] = lane_arg(args, l)->c[i];
    }
    convnd_emu_mma_f32(16, 8, K, a, b, c, d);
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        for (int i = 0; i < 4; ++i)
            lane_arg(args, l)->d[i] = d[(l / 4 + 8 * (i >> 1)) * 8 + 2 * (l % 4) + (i & 1)];
}

template <typename T> void mma_m16n8k16_all(void *const *args, uint32_t lanes) {
    mma_warp<16>(args, lanes, "mma.sync.m16n8k16",
                 [](const mma_arg *m, uint32_t g, uint32_t t, float *a, float *b) {
                     for (int i = 0; i < 4; ++i)
                         for (int h = 0; h < 2; ++h)
                             a[(g + 8 * (i & 1)) * 16 + 2 * t + 8 * (i >> 1) + h] =
                                 half_of<T>(m->a[i], h);
                     for (int i = 0; i < 2; ++i)
                         for (int h = 0; h < 2; ++h)
                             b[(2 * t + 8 * i + h) * 8 + g] = half_of<T>(m->b[i], h);
                 });
}

inline void mma_m16n8k8_tf32_all(void *const *args, uint32_t lanes) {
    mma_warp<8>(args, lanes, "mma.sync.m16n8k8.tf32",
                [](const mma_arg *m, uint32_t g, uint32_t t, float *a, float *b) {
                    for (int i = 0; i < 4; ++i)
                        a[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)] = tf32_of(m->a[i]);
                    for (int i = 0; i < 2; ++i)
                        b[(t + 4 * i) * 8 + g] = tf32_of(m->b[i]);
                });
}

} // namespace convnd_mma_emu

template <int NUM, bool TRANS> inline void convnd_ldmatrix(uint32_t (&r)[NUM], const void *row) {
    static_assert(NUM == 1 || NUM == 2 || NUM == 4, "ldmatrix loads 1, 2 or 4 matrices");
    convnd_mma_emu::ldmatrix_arg arg = {r, row};
    convnd_emu_warp_collective(TRANS ? "ldmatrix.trans" : "ldmatrix", 0xFFFFFFFFu, &arg,
                               convnd_mma_emu::ldmatrix_all<NUM, TRANS>);
}

template <int NUM, bool TRANS>
inline void convnd_ldmatrix_at(uint32_t (&r)[NUM], const void *base, int byte_off) {
    convnd_ldmatrix<NUM, TRANS>(r, base ? static_cast<const char *>(base) + byte_off : nullptr);
}

template <typename T>
inline void convnd_mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                const float (&c)[4]) {
    static_assert(std::is_same<T, convnd_half>::value || std::is_same<T, convnd_bf16>::value,
                  "m16n8k16 takes f16 or bf16 inputs");
    convnd_mma_emu::mma_arg arg = {d, a, b, c};
    convnd_emu_warp_collective("mma.sync.m16n8k16", 0xFFFFFFFFu, &arg,
                               convnd_mma_emu::mma_m16n8k16_all<T>);
}

inline void convnd_mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                    const float (&c)[4]) {
    convnd_mma_emu::mma_arg arg = {d, a, b, c};
    convnd_emu_warp_collective("mma.sync.m16n8k8.tf32", 0xFFFFFFFFu, &arg,
                               convnd_mma_emu::mma_m16n8k8_tf32_all);
}

#endif
