/* The tensor-core stage tiles' XOR swizzle (primitives/smem_tile.cuh) as the kernels index it, for
 * every tensor-core configuration (families/igemm/igemm_configs.h) of the forward (igemm_tc_mma, B
 * n-major) and transposed (convT_tc_mma_kmajor, B k-major) GEMMs, f16 and TF32:
 *   - the layout is a permutation of the tile (no two elements share a slot, none outside it);
 *   - every ldmatrix phase the math issues (8 lanes' row addresses, from the math policy's own
 *     a_ldsm_offset / b_ldsm_offset) falls in 8 distinct 16-byte bank groups;
 *   - every 8-thread phase of the vector loaders' 16-byte cp.async writes does too;
 *   - a row's start plus a column (L::row_start, L::at: the gather loaders) is offset(row, col).
 * Correctness of what is written and read through the swizzle is the forced-schedule suites'
 * job; bank conflicts do not change results, so they are checked here. */
#define CONVND_EMU 1
#include "portability.cuh"
#include "igemm_configs.h"
#include "convT_kmajor.cuh"
#include "igemm_mma.cuh"

#include <criterion/criterion.h>
#include <string>
#include <vector>

namespace {

using namespace CONVND_NS;

/* 8 byte addresses of one 16-byte-per-thread phase (n of them present: fewer for a loader's
 * idle threads): conflict-free when their 16-byte bank groups (address / 16 mod 8) differ. */
bool phase_conflict_free(const int (&bytes)[8], int n = 8) {
    unsigned seen = 0;
    for (int i = 0; i < n; ++i) {
        const unsigned bit = 1u << ((bytes[i] / 16) % 8);
        if (seen & bit) return false;
        seen |= bit;
    }
    return true;
}

template <class L, typename T> void check_permutation(const std::string &what) {
    std::vector<char> used(L::ELEMS, 0);
    for (int r = 0; r < L::ROWS; ++r)
        for (int c = 0; c < L::COLS; ++c) {
            const int o = L::offset(r, c);
            cr_assert(o >= 0 && o < L::ELEMS, "%s: (%d, %d) -> %d outside the %d-element tile",
                      what.c_str(), r, c, o, L::ELEMS);
            cr_assert(!used[o], "%s: (%d, %d) -> %d, a slot already taken", what.c_str(), r, c, o);
            used[o] = 1;
        }
}

/* The gather loaders form a row's part of the offset once (L::row_start) and each column's with
 * L::at: that must be offset(row, col) for every element of the tile. */
template <class L> void check_row_start(const std::string &what) {
    for (int r = 0; r < L::ROWS; ++r)
        for (int c = 0; c < L::COLS; ++c)
            cr_assert_eq(L::at(L::row_start(r), c), L::offset(r, c),
                         "%s: (%d, %d): at(row_start) %d, offset %d", what.c_str(), r, c,
                         L::at(L::row_start(r), c), L::offset(r, c));
}

/* The 16-byte cp.async writes of a vector loader filling L: thread tid writes chunk
 * tid % CHUNKS of row tid / CHUNKS (+ pass * ROWS_PER_PASS), igemm_load.cuh / convT_kmajor.cuh. */
template <class L, typename T> void check_cp_async(int threads, const std::string &what) {
    constexpr int VEC = 16 / (int)sizeof(T), CHUNKS = L::COLS / VEC;
    const int rows_per_pass = threads / CHUNKS;
    for (int pass_row = 0; pass_row < L::ROWS; pass_row += rows_per_pass)
        for (int t0 = 0; t0 < threads; t0 += 8) {
            int bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0}, n = 0;
            for (int l = 0; l < 8; ++l) {
                const int row = pass_row + (t0 + l) / CHUNKS, col = ((t0 + l) % CHUNKS) * VEC;
                if (row < L::ROWS) bytes[n++] = L::offset(row, col) * (int)sizeof(T);
            }
            cr_assert(phase_conflict_free(bytes, n),
                      "%s: cp.async threads %d..%d of rows from %d conflict (bytes %d %d %d %d "
                      "%d %d %d %d)",
                      what.c_str(), t0, t0 + 7, pass_row, bytes[0], bytes[1], bytes[2], bytes[3],
                      bytes[4], bytes[5], bytes[6], bytes[7]);
        }
}

/* Every ldmatrix.x4 of every warp of Mma over one k-tile: lanes 8q..8q+7 are phase q. */
template <class Mma, typename T, int BK> void check_ldmatrix(const std::string &what) {
    for (int warp = 0; warp < Mma::THREADS / 32; ++warp)
        for (int k = 0; k < BK; k += 16)
            for (int which = 0; which < 2; ++which) {
                const int count = which == 0 ? Mma::FM : Mma::FN / 2;
                for (int f = 0; f < count; ++f) {
                    int off[32];
                    for (int lane = 0; lane < 32; ++lane) {
                        Mma m;
                        m.init(warp * 32 + lane);
                        off[lane] = which == 0 ? m.a_ldsm_offset(k, f) : m.b_ldsm_offset(k, 2 * f);
                    }
                    for (int q = 0; q < 4; ++q) {
                        int bytes[8];
                        for (int l = 0; l < 8; ++l)
                            bytes[l] = off[8 * q + l] * (int)sizeof(T);
                        cr_assert(phase_conflict_free(bytes),
                                  "%s: warp %d ldmatrix of %s tile %d at k=%d, matrix %d "
                                  "conflicts (bytes %d %d %d %d %d %d %d %d)",
                                  what.c_str(), warp, which ? "B" : "A", f, k, q, bytes[0],
                                  bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6],
                                  bytes[7]);
                    }
                }
            }
}

template <typename T, int BM, int BN, int BK, int WM, int WN> void check_config(const char *name) {
    using fwd = igemm_tc_mma<T, BM, BN, BK, WM, WN>;
    using tr = convT_tc_mma_kmajor<T, BM, BN, BK, WM, WN>;
    const std::string base = std::string(name) + (sizeof(T) == 4 ? " tf32" : " f16");
    check_permutation<typename fwd::A_TILE, T>(base + " A");
    check_permutation<typename fwd::B_TILE, T>(base + " B n-major");
    check_permutation<typename tr::B_TILE, T>(base + " B k-major");
    check_row_start<typename fwd::A_TILE>(base + " A");
    check_row_start<typename fwd::B_TILE>(base + " B n-major");
    check_row_start<typename tr::B_TILE>(base + " B k-major");
    check_cp_async<typename fwd::A_TILE, T>(fwd::THREADS, base + " A");
    check_cp_async<typename fwd::B_TILE, T>(fwd::THREADS, base + " B n-major");
    check_cp_async<typename tr::B_TILE, T>(tr::THREADS, base + " B k-major");
    if constexpr (sizeof(T) == 2) { /* TF32 reads element by element, no ldmatrix */
        check_ldmatrix<fwd, T, BK>(base + " igemm_tc");
        check_ldmatrix<tr, T, BK>(base + " convT_tc");
    }
}

} // namespace

Test(smem_swizzle, tensor_core_tiles_are_conflict_free_permutations) {
    int configs = 0;
#define CHECK_CONFIG(cname, BM, BN, BK, WM, WN, STAGES)                                            \
    check_config<convnd_half, BM, BN, BK, WM, WN>(#cname);                                         \
    check_config<float, BM, BN, BK, WM, WN>(#cname);                                               \
    ++configs;
    CONVND_IGEMM_TC_CONFIGS(CHECK_CONFIG)
#undef CHECK_CONFIG
    cr_assert(configs > 0);
}
