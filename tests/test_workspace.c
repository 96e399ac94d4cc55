/* The workspace contract (include/convnd.h, CONVND_WORKSPACE_ALIGNMENT): a workspace must start
 * on a 256-byte boundary and overlap none of the call's tensors; a violation is refused before
 * any write, with a message naming the addresses, and every byte of every buffer survives. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "test_conv_case.h"
#include "test_schedule_runs.h"

TestSuite(workspace, .timeout = 120);

/* x, w and y of one case, and room for a workspace, in one device buffer. */
typedef struct ws_layout {
    test_conv_case c;
    unsigned char *buf;
    size_t bytes, off_w, off_y, off_ws, need;
    convnd_options opts;
} ws_layout;

static size_t round256(size_t n) {
    return (n + 255) / 256 * 256;
}

static void layout_init(ws_layout *l) {
    const convnd_problem p = test_parse_valid("fwd 2d N=1 Ci=4 Co=8 I=6,6 K=3");
    char err[256];
    cr_assert(test_case_init(&l->c, &p, 0, 3, err, sizeof err), "%s", err);
    memset(&l->opts, 0, sizeof l->opts);
    l->opts.schedule = "cublas_im2col"; /* the schedule that needs a workspace */
    cr_assert_eq(convnd_workspace_size(&l->c.p, &l->opts, &l->need), CONVND_OK);
    cr_assert(l->need > 256, "need=%zu", l->need);
    const size_t xb = (size_t)l->c.xd.numel * 4, wb = (size_t)l->c.wd.numel * 4;
    const size_t yb = (size_t)l->c.yd.numel * 4;
    l->off_w = round256(xb);
    l->off_y = l->off_w + round256(wb);
    l->off_ws = l->off_y + round256(yb);
    l->bytes = l->off_ws + round256(l->need) + 256;
    cr_assert_eq(convnd_malloc((void **)&l->buf, l->bytes), CONVND_OK);
    cr_assert_eq((uintptr_t)l->buf % CONVND_WORKSPACE_ALIGNMENT, 0,
                 "convnd_malloc returned %p, not %d-byte aligned", (void *)l->buf,
                 CONVND_WORKSPACE_ALIGNMENT);
    cr_assert_eq(convnd_memset(l->buf, 0xa5, l->bytes), CONVND_OK);
    cr_assert_eq(convnd_memcpy_h2d(l->buf, l->c.hx, xb), CONVND_OK);
    cr_assert_eq(convnd_memcpy_h2d(l->buf + l->off_w, l->c.hw, wb), CONVND_OK);
}

static void layout_free(ws_layout *l) {
    convnd_free(l->buf);
    test_case_free(&l->c);
}

/* conv_nd with the workspace at buf + ws_off: `want`, a message containing each needle, and
 * every byte of the buffer (x, w, y, workspace) unchanged. */
static void expect_refused(ws_layout *l, ptrdiff_t ws_off, size_t ws_bytes, convnd_status want,
                           const char *needle1, const char *needle2) {
    unsigned char *before = malloc(l->bytes), *after = malloc(l->bytes);
    cr_assert(before && after);
    cr_assert_eq(convnd_memcpy_d2h(before, l->buf, l->bytes), CONVND_OK);
    const convnd_status st = conv_nd(&l->c.p, l->buf, l->buf + l->off_w, NULL, NULL,
                                     l->buf + l->off_y, l->buf + ws_off, ws_bytes, NULL, &l->opts);
    const char *msg = convnd_last_error();
    cr_expect_eq(st, want, "workspace at +%td: status %d (%s), expected %d", ws_off, (int)st, msg,
                 (int)want);
    cr_expect(strstr(msg, needle1) && strstr(msg, needle2), "message '%s' lacks '%s' / '%s'", msg,
              needle1, needle2);
    cr_assert_eq(convnd_memcpy_d2h(after, l->buf, l->bytes), CONVND_OK);
    cr_expect(memcmp(before, after, l->bytes) == 0, "workspace at +%td: a buffer was written",
              ws_off);
    free(before);
    free(after);
}

Test(workspace, misaligned_workspace_is_refused) {
    ws_layout l;
    layout_init(&l);
    for (ptrdiff_t shift = 4; shift < 256; shift *= 2) /* element-aligned, not 256-aligned */
        expect_refused(&l, (ptrdiff_t)l.off_ws + shift, l.need, CONVND_ERR_INVALID_ARGUMENT,
                       "workspace=0x", "is not aligned to 256 bytes");
    layout_free(&l);
}

Test(workspace, workspace_overlapping_a_tensor_is_refused) {
    ws_layout l;
    layout_init(&l);
    expect_refused(&l, 0, l.need, CONVND_ERR_ALIASING, "overlaps x", "must not overlap");
    expect_refused(&l, (ptrdiff_t)l.off_y, l.need, CONVND_ERR_ALIASING, "overlaps y", "[0x");
    expect_refused(&l, (ptrdiff_t)l.off_w, l.need, CONVND_ERR_ALIASING, "overlaps w", "[0x");
    /* starts inside y's last 256 bytes and runs on into free space */
    cr_assert((size_t)l.c.yd.numel * 4 > 256);
    expect_refused(&l, (ptrdiff_t)l.off_ws - 256, l.need, CONVND_ERR_ALIASING, "overlaps y", "[0x");
    layout_free(&l);
}

Test(workspace, aligned_disjoint_workspace_runs) {
    ws_layout l;
    layout_init(&l);
    const convnd_status st = conv_nd(&l.c.p, l.buf, l.buf + l.off_w, NULL, NULL, l.buf + l.off_y,
                                     l.buf + l.off_ws, l.need, NULL, &l.opts);
    cr_expect_eq(st, CONVND_OK, "%s", convnd_last_error());
    layout_free(&l);
}

Test(workspace, null_workspace_message_says_null) {
    ws_layout l;
    layout_init(&l);
    const convnd_status st = conv_nd(&l.c.p, l.buf, l.buf + l.off_w, NULL, NULL, l.buf + l.off_y,
                                     NULL, l.need, NULL, &l.opts);
    cr_expect_eq(st, CONVND_ERR_WORKSPACE);
    const char *msg = convnd_last_error();
    cr_expect(strstr(msg, "workspace is NULL") && !strstr(msg, "given"),
              "message '%s' should say the workspace is NULL, not what was 'given'", msg);
    layout_free(&l);
}
