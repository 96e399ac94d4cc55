/* The benchmark's copy-free rows (bench/copy_free.c) on the emulated device at their small
 * shapes: every fused row and every copy-based peer validates against the CPU reference (the
 * state bit for bit, the buffer's other channels untouched) and is timed. The times are CPU
 * emulation times and are not asserted on. */
#include <criterion/criterion.h>
#include <string.h>

#include "copy_free.h"

TestSuite(bench_copy_free, .timeout = 300);

Test(bench_copy_free, every_row_validates_and_runs) {
    bench_copy_free_row rows[BENCH_COPY_FREE_ROWS];
    const int32_t bad = bench_copy_free_run(1, &bench_timing_emulated, 7, rows);
    for (int32_t i = 0; i < BENCH_COPY_FREE_ROWS; ++i) {
        const bench_copy_free_row *r = &rows[i];
        cr_expect(r->validated, "%s / %s failed validation: %s", r->scenario, r->candidate,
                  r->note);
        cr_expect(r->median_ms > 0.0 && r->reps >= 1, "%s / %s was not timed: %s", r->scenario,
                  r->candidate, r->note);
        cr_expect(r->plan[0] != '\0', "%s / %s names no plan", r->scenario, r->candidate);
    }
    cr_expect_eq(bad, 0);
    /* the fused rows run a schedule that reads prefixes and views (the cache row, GEMM-shaped
     * in bf16: the tensor-core implicit GEMM's prefix kernel); the peers a packed conv */
    cr_expect(strncmp(rows[0].plan, "igemm_tc:", 9) == 0, "fused cache row on %s", rows[0].plan);
    cr_expect(strstr(rows[1].plan, "cat + pad copies + ") == rows[1].plan, "%s", rows[1].plan);
    cr_expect(strncmp(rows[2].plan, "direct:", 7) == 0, "fused slice row on %s", rows[2].plan);
    cr_expect(strstr(rows[3].plan, " + cat copy") != NULL, "%s", rows[3].plan);
}
