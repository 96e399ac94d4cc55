/* Folding a constant zero pad op (PyTorch's F.pad) into the forward conv that follows it
 * (SPEC section 7): the conv's implicit zero padding absorbs it, and negative pads (crops)
 * become negative conv padding. */
#include "bind_common.h"
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <math.h>

static const char *pad_mode_name(convnd_pad_mode mode) {
    switch (mode) {
    case CONVND_PAD_CONSTANT:
        return "constant";
    case CONVND_PAD_REFLECT:
        return "reflect";
    case CONVND_PAD_REPLICATE:
        return "replicate";
    case CONVND_PAD_CIRCULAR:
        return "circular";
    }
    return "?";
}

convnd_status convnd_fold_pad(convnd_problem *p, const convnd_pads *pad, convnd_pad_mode mode,
                              double value) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (!pad) return convnd_error(CONVND_ERR_NULL_POINTER, "pad list is NULL");
    convnd_status st = convnd_validate(p);
    if (st) return st;
    if (mode < CONVND_PAD_CONSTANT || mode > CONVND_PAD_CIRCULAR)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "pad mode=%d is not constant (0), reflect (1), replicate (2) or "
                            "circular (3)",
                            (int)mode);
    if (mode != CONVND_PAD_CONSTANT)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "pad mode=%s cannot be folded into the conv: its implicit padding is "
                            "zeros, so only mode=constant with value=0 folds",
                            pad_mode_name(mode));
    if (isnan(value) || value != 0.0)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "pad value=%g cannot be folded into the conv: its implicit padding is "
                            "zeros, so only value=0 folds",
                            value);
    if (p->mode != CONVND_FORWARD)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "a pad cannot be folded into a transposed conv: its padding crops "
                            "the output instead of padding the input");

    const int32_t rank = p->dims + 2;
    char text[CONVND_LIST_TEXT];
    const int32_t shown = pad->len < 0                      ? 0
                          : pad->len > CONVND_PADS_CAPACITY ? CONVND_PADS_CAPACITY
                                                            : pad->len;
    convnd_format_ints(text, sizeof text, pad->v, shown);
    if (pad->len < 0 || pad->len % 2 != 0 || pad->len > 2 * rank)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "pad=%s has length %d; expected an even length of at most %d (before "
                            "and after of up to the %d dims of x, last dim first)",
                            text, (int)pad->len, (int)(2 * rank), (int)rank);

    convnd_problem folded = *p;
    for (int32_t j = 0; j < pad->len / 2; ++j) {
        const int32_t dim = rank - 1 - j; /* pairs run last dim first */
        const int64_t before = pad->v[2 * j], after = pad->v[2 * j + 1];
        if (dim < 2) {
            if (before != 0 || after != 0)
                return convnd_error(CONVND_ERR_UNSUPPORTED,
                                    "pad[%d]=%" PRId64 ", pad[%d]=%" PRId64
                                    " pad dim %d (%s) of x, which a conv cannot absorb; only "
                                    "spatial dims fold (pad=%s)",
                                    (int)(2 * j), before, (int)(2 * j + 1), after, (int)dim,
                                    dim == 0 ? "N" : "C", text);
            continue;
        }
        const int32_t t = dim - 2;
        /* A crop followed by the conv's own zero padding on the same side turns values of x
         * into zeros; no single padding of x expresses that (golden cases pad_conv*). */
        if ((before < 0 && p->pad_before[t] > 0) || (after < 0 && p->pad_after[t] > 0))
            return convnd_error(CONVND_ERR_UNSUPPORTED,
                                "pad %" PRId64 "/%" PRId64 " crops spatial dim %d where the conv "
                                "pads %" PRId64 "/%" PRId64 ": the conv would zero-fill cropped "
                                "positions, which no padding of x expresses (pad=%s)",
                                before, after, (int)t, p->pad_before[t], p->pad_after[t], text);
        int64_t unpadded;
        if (convnd_sub_overflows(p->input[t], before, &unpadded) ||
            convnd_sub_overflows(unpadded, after, &unpadded) ||
            convnd_add_overflows(folded.pad_before[t], before, &folded.pad_before[t]) ||
            convnd_add_overflows(folded.pad_after[t], after, &folded.pad_after[t]))
            return convnd_error(CONVND_ERR_OVERFLOW,
                                "folding pad %" PRId64 "/%" PRId64 " into spatial dim %d "
                                "(input=%" PRId64 ", pad %" PRId64 "/%" PRId64 ") overflows int64",
                                before, after, (int)t, p->input[t], p->pad_before[t],
                                p->pad_after[t]);
        if (unpadded < 1)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "pad %" PRId64 "/%" PRId64 " on spatial dim %d does not fit the "
                                "conv's input[%d]=%" PRId64 ": x would have size %" PRId64 " < 1",
                                before, after, (int)t, (int)t, p->input[t], unpadded);
        folded.input[t] = unpadded;
    }
    st = convnd_validate(&folded);
    if (st) return st;
    *p = folded;
    return CONVND_OK;
}
