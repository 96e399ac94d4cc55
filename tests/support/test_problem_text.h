/* Problems as one line of text, for test tables and assertion messages. format() writes the
 * same syntax parse() reads, so a failing case's message can be pasted into a table:
 *
 *   "tr 2d N=2 Ci=4 Co=6 g=2 I=5,7 K=3,2 S=2,1 D=1,2 P0=1,0 P1=0,-1 bf16 x=cl w=cf y=auto
 *    bias z alpha=1.5 beta=0.5 act=gelu tf32"
 *
 * Views (SPEC §11) are "xs=", "ys=", "zs=" with dims + 2 strides and an optional ":extent"; a
 * prefix and state (SPEC §12) "axis=0 pre=2 st=2", a suffix (SPEC §14) "axis=0 suf=3"; views of
 * the prefix and suffix "ps=", "fs=" as "xs=".
 * Mode ("fwd"/"tr"/"wg" for wgrad) and dims ("1d".."3d") come first; a list with one value is used
 * for every dim; fields left out keep convnd_problem_init's defaults (N=1, g=1, S=D=1, P=0, f32,
 * channels-first x and w, y=auto, alpha=1, beta=0, no bias/z/activation, exact math). */
#ifndef CONVND_TEST_PROBLEM_TEXT_H
#define CONVND_TEST_PROBLEM_TEXT_H

#include <stddef.h>
#include "convnd.h"

/* Writes p into buf (truncated to buf_len); returns buf. */
const char *convnd_problem_format(char *buf, size_t buf_len, const convnd_problem *p);

/* Parses text into *p. Returns 1, or 0 with the offending token in err. */
int test_problem_parse(const char *text, convnd_problem *p, char *err, size_t err_len);

#endif
