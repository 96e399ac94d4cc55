/* The emulated device's stmatrix (see primitives/stmatrix.cuh for the interface and the PTX ISA
 * layout it implements): warp-collective like ldmatrix, the inverse of its table, with the same
 * checks (all 32 lanes; each addressed row in the block's shared memory, 16-byte aligned). The
 * last lane to arrive writes the whole warp's rows. */
#ifndef CONVND_STMATRIX_EMU_CUH
#define CONVND_STMATRIX_EMU_CUH

#include "mma_sync_emu.cuh"

namespace convnd_mma_emu {

struct stmatrix_arg {
    const uint32_t *r;
    void *row;
};

/* Writes 16-bit element c (0..7) of the row lane `l` addressed. */
inline void set_row_element(void *const *args, uint32_t l, uint32_t c, uint32_t v) {
    const uint16_t h = (uint16_t)v;
    memcpy(static_cast<unsigned char *>(static_cast<stmatrix_arg *>(args[l])->row) + 2 * c, &h, 2);
}

template <int NUM, bool TRANS> void stmatrix_all(void *const *args, uint32_t lanes) {
    static const char *const name = TRANS ? "stmatrix.trans" : "stmatrix";
    check_matrix_rows(name, NUM, lanes,
                      [&](uint32_t l) { return static_cast<stmatrix_arg *>(args[l])->row; });
    /* Lane 4*row + w's r[i] holds word w of row `row` of matrix i (columns 2w, 2w+1, low half
     * first); with TRANS, of its column `row` (rows 2w, 2w+1). */
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        for (int i = 0; i < NUM; ++i) {
            const uint32_t row = l / 4, w = l % 4;
            const uint32_t v = static_cast<stmatrix_arg *>(args[l])->r[i];
            if (TRANS) {
                set_row_element(args, 8 * i + 2 * w, row, v & 0xFFFFu);
                set_row_element(args, 8 * i + 2 * w + 1, row, v >> 16);
            } else {
                set_row_element(args, 8 * i + row, 2 * w, v & 0xFFFFu);
                set_row_element(args, 8 * i + row, 2 * w + 1, v >> 16);
            }
        }
}

} // namespace convnd_mma_emu

template <int NUM, bool TRANS> inline void convnd_stmatrix(const uint32_t (&r)[NUM], void *row) {
    static_assert(NUM == 1 || NUM == 2 || NUM == 4, "stmatrix stores 1, 2 or 4 matrices");
    convnd_mma_emu::stmatrix_arg arg = {r, row};
    convnd_emu_warp_collective(TRANS ? "stmatrix.trans" : "stmatrix", 0xFFFFFFFFu, &arg,
                               convnd_mma_emu::stmatrix_all<NUM, TRANS>);
}

#endif
