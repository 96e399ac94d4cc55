#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_wgrad_case.h"
#include "test_conv_case.h"
#include "test_random.h"
#include "test_tolerance.h"
#include "convnd_ref.h"

static void *host_alloc(size_t es, int64_t n) {
    return calloc((size_t)(n > 0 ? n : 1), es);
}

int test_wgrad_init(test_wgrad_case *c, const convnd_problem *p, int z_in_place, uint64_t seed,
                    char *err, size_t err_len) {
    memset(c, 0, sizeof *c);
    c->p = *p;
    if (c->p.y_layout == CONVND_LAYOUT_AUTO)
        c->p.y_layout = convnd_default_output_layout(p->x_layout, p->w_layout);
    c->z_in_place = z_in_place;
    if (convnd_tensor_describe(&c->p, CONVND_X, &c->xd) != CONVND_OK ||
        convnd_tensor_describe(&c->p, CONVND_Y, &c->dyd) != CONVND_OK ||
        convnd_tensor_describe(&c->p, CONVND_W, &c->dwd) != CONVND_OK) {
        snprintf(err, err_len, "describe failed: %s", convnd_last_error());
        return 0;
    }
    c->esize = convnd_ref_dtype_size(c->p.dtype);
    test_rng r = test_rng_seed(seed);
    /* x and dy may be views (SPEC §11): their buffers run to the end of their last element */
    const int64_t x_span = c->xd.bytes / (int64_t)c->esize,
                  dy_span = c->dyd.bytes / (int64_t)c->esize;
    c->hx = host_alloc(c->esize, x_span);
    c->hdy = host_alloc(c->esize, dy_span);
    c->hz = host_alloc(c->esize, c->dwd.numel);
    c->hdw = host_alloc(c->esize, c->dwd.numel);
    c->ref = calloc((size_t)(c->dwd.numel > 0 ? c->dwd.numel : 1), sizeof(double));
    c->mag = calloc((size_t)(c->dwd.numel > 0 ? c->dwd.numel : 1), sizeof(double));
    if (!c->hx || !c->hdy || !c->hz || !c->hdw || !c->ref || !c->mag) {
        snprintf(err, err_len, "out of host memory");
        return 0;
    }
    test_fill_random(c->p.dtype, c->hx, x_span, &r);
    test_fill_random(c->p.dtype, c->hdy, dy_span, &r);
    test_fill_random(c->p.dtype, c->hz, c->dwd.numel, &r);
    c->dx = test_device_upload(c->p.dtype, c->hx, x_span);
    c->ddy = test_device_upload(c->p.dtype, c->hdy, dy_span);
    c->ddw = test_device_upload(c->p.dtype, NULL, c->dwd.numel);
    c->dz = c->p.has_z && !z_in_place ? test_device_upload(c->p.dtype, c->hz, c->dwd.numel) : NULL;
    if (!c->dx || !c->ddy || !c->ddw || (c->p.has_z && !z_in_place && !c->dz)) {
        snprintf(err, err_len, "device allocation failed");
        return 0;
    }
    if (convnd_ref_wgrad_f64(&c->p, c->hx, c->hdy, c->hz, c->ref, c->mag) != CONVND_OK) {
        snprintf(err, err_len, "reference failed: %s", convnd_last_error());
        return 0;
    }
    return 1;
}

void test_wgrad_free(test_wgrad_case *c) {
    free(c->hx);
    free(c->hdy);
    free(c->hz);
    free(c->hdw);
    free(c->ref);
    free(c->mag);
    if (c->dx) convnd_free(c->dx);
    if (c->ddy) convnd_free(c->ddy);
    if (c->dz) convnd_free(c->dz);
    if (c->ddw) convnd_free(c->ddw);
    memset(c, 0, sizeof *c);
}

convnd_status test_wgrad_run(test_wgrad_case *c, const char *spec) {
    const size_t bytes = c->esize * (size_t)(c->dwd.numel > 0 ? c->dwd.numel : 1);
    void *start = malloc(bytes);
    if (!start) return CONVND_ERR_OUT_OF_MEMORY;
    if (c->z_in_place)
        memcpy(start, c->hz, bytes);
    else
        test_poison_fill(c->p.dtype, start, (int64_t)(bytes / c->esize));
    convnd_memcpy_h2d(c->ddw, start, bytes);
    free(start);

    convnd_options opts = {.schedule = spec};
    size_t ws_bytes = 0;
    convnd_status st = convnd_workspace_size(&c->p, &opts, &ws_bytes);
    if (st != CONVND_OK) return st;
    void *ws = ws_bytes ? test_device_upload(CONVND_F32, NULL, (int64_t)(ws_bytes / 4 + 1)) : NULL;
    const void *z = c->z_in_place ? c->ddw : c->dz;
    st = conv_nd(&c->p, c->dx, c->ddy, NULL, z, c->ddw, ws, ws_bytes, NULL, &opts);
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    if (ws) convnd_free(ws);
    convnd_memcpy_d2h(c->hdw, c->ddw, c->esize * (size_t)c->dwd.numel);
    return st;
}

int test_wgrad_check(const test_wgrad_case *c, char *msg, size_t msg_len) {
    const test_tolerance tol = test_tolerance_for(&c->p);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < c->dwd.numel; ++i) {
        const double v = convnd_ref_load(c->p.dtype, c->hdw, i);
        const double bound = test_tolerance_bound(&tol, c->ref[i], c->mag[i]);
        if (!isfinite(v) || fabs(v - c->ref[i]) > bound) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (bad == 0) return 1;
    snprintf(msg, msg_len,
             "%lld of %lld dw elements wrong; first at %lld: got %.9g, exact %.9g "
             "(mag %.3g)%s",
             (long long)bad, (long long)c->dwd.numel, (long long)first,
             convnd_ref_load(c->p.dtype, c->hdw, first), c->ref[first], c->mag[first],
             test_is_poison(c->p.dtype, c->hdw, first) ? " (never written)" : "");
    return 0;
}
