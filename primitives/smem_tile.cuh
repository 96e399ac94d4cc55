/* Layouts of a shared-memory stage tile: ROWS x COLS elements, each row's COLS contiguous in
 * 16-byte chunks; offset(row, col) is the element's index in the tile, which every writer
 * (loaders) and reader (math) of a tile goes through.
 *
 *  - smem_padded_tile: rows PAD elements apart beyond COLS (CUDA-core tiles: float4 reads).
 *  - smem_swizzled_tile: no padding; the 16-byte chunks of each 128-byte line are permuted by
 *    XOR with the line's index mod 8 (CUTLASS sm80's Swizzle<3, 4, 3> on 16-byte chunks):
 *      COLS >= 8 chunks  chunk c of row r lands at (c & ~7) | ((c ^ r) & 7) of the row;
 *      COLS == 4 or 2    the 8/CPR rows sharing a 128-byte line form one line of 8 chunks,
 *                        permuted by XOR with (line mod 8).
 *    So the 8 row addresses of one ldmatrix phase (8 consecutive rows at one chunk, the first
 *    row a multiple of 8) fall in 8 distinct 16-byte bank groups, and a warp's 16-byte cp.async
 *    writes (8 threads: 8 chunks of one line) too: no bank conflicts either way. The emulated
 *    device needs nothing for this: the swizzle is the kernel's own indexing. */
#ifndef CONVND_SMEM_TILE_CUH
#define CONVND_SMEM_TILE_CUH

namespace CONVND_NS {

template <typename T, int ROWS_, int COLS_, int PAD> struct smem_padded_tile {
    static constexpr int ROWS = ROWS_, COLS = COLS_;
    static constexpr int LD = COLS + PAD; /* elements from one row to the next */
    static constexpr int ELEMS = ROWS * LD;
    static constexpr bool SWIZZLED = false;
    static_assert((LD * sizeof(T)) % 16 == 0, "padded rows must stay 16-byte aligned");

    __device__ __forceinline__ static int offset(int row, int col) { return row * LD + col; }

    /* offset(row, col) == at(row_start(row), col) for 0 <= col < COLS: a loader that writes
     * many columns of one row forms the row's part once. */
    __device__ __forceinline__ static int row_start(int row) { return row * LD; }
    __device__ __forceinline__ static int at(int start, int col) { return start + col; }
};

template <typename T, int ROWS_, int COLS_> struct smem_swizzled_tile {
    static constexpr int ROWS = ROWS_, COLS = COLS_;
    static constexpr int VEC = 16 / (int)sizeof(T); /* elements per 16-byte chunk */
    static constexpr int CPR = COLS / VEC;          /* chunks per row */
    static constexpr int LD = COLS;
    static constexpr int ELEMS = ROWS * COLS;
    static constexpr bool SWIZZLED = true;
    static_assert(COLS % VEC == 0 && (CPR & (CPR - 1)) == 0 && CPR >= 2,
                  "a swizzled row is a power-of-two number (>= 2) of 16-byte chunks");
    /* (CPR >= 8 ? 1 : 8 / CPR): nvcc warns on a literal "% 0" even in the untaken branch */
    static_assert(ROWS % (CPR >= 8 ? 1 : 8 / CPR) == 0, "rows must fill whole 128-byte lines");

    /* Index of chunk c of row `row` among the tile's chunks. */
    __device__ __forceinline__ static int chunk(int row, int c) {
        if constexpr (CPR >= 8) {
            return row * CPR + (c ^ (row & 7));
        } else {
            constexpr int PER_LINE = 8 / CPR; /* rows per 128-byte line */
            const int line = row / PER_LINE;
            return line * 8 + (((row % PER_LINE) * CPR + c) ^ (line & 7));
        }
    }

    __device__ __forceinline__ static int offset(int row, int col) {
        return chunk(row, col / VEC) * VEC + col % VEC;
    }

    /* offset(row, col) == at(row_start(row), col) for 0 <= col < COLS, as for the padded tile:
     * the offset is a row position, whose bits lie above both col's and the row's XOR term
     * (above COLS, or above the 128-byte line that short rows share), plus col XORed with that
     * term (tests/test_emu_smem_swizzle.cpp checks every tile). */
    __device__ __forceinline__ static int row_start(int row) { return offset(row, 0); }
    __device__ __forceinline__ static int at(int start, int col) { return start ^ col; }
};

} // namespace CONVND_NS

#endif
