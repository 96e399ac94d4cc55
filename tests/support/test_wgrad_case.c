#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_wgrad_case.h"
#include "test_conv_case.h"
#include "test_random.h"
#include "test_tolerance.h"
#include "test_orders.h"
#include "registry.h"
#include "problem_internal.h"
#include "convnd_ref.h"

const char *const test_wgrad_determinism_problems[TEST_WGRAD_DETERMINISM_PROBLEMS] = {
    "wg 1d N=2 Ci=4 Co=4 g=4 I=500 K=4 P0=3 P1=0 x=cl w=cl y=cl",
    "wg 2d N=2 Ci=3 Co=5 I=13,11 K=3 S=2 P0=1 P1=1",
};

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

convnd_status test_wgrad_launch(test_wgrad_case *c, const char *spec,
                                test_wgrad_launcher launcher) {
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
    if (!launcher) {
        st = conv_nd(&c->p, c->dx, c->ddy, NULL, z, c->ddw, ws, ws_bytes, NULL, &opts);
    } else {
        convnd_launch_args a;
        memset(&a, 0, sizeof a);
        int32_t schedule = -1;
        st = convnd_parse_spec(spec, &schedule, &a.config);
        if (st == CONVND_OK) st = convnd_params_from_problem(&c->p, &a.params);
        if (st == CONVND_OK) {
            if (a.config < 0) a.config = 0;
            a.x = c->dx;
            a.w = c->ddy;
            a.z = z;
            a.y = c->ddw;
            a.workspace = ws;
            a.workspace_bytes = ws_bytes;
            a.device = CONVND_DEVICE_EMULATED;
            st = launcher(&a);
        }
    }
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    if (ws) convnd_free(ws);
    convnd_memcpy_d2h(c->hdw, c->ddw, c->esize * (size_t)c->dwd.numel);
    return st;
}

convnd_status test_wgrad_run(test_wgrad_case *c, const char *spec) {
    return test_wgrad_launch(c, spec, NULL);
}

int test_wgrad_bit_identical(test_wgrad_case *c, const char *spec, test_wgrad_launcher launcher,
                             char *msg, size_t msg_len) {
    const size_t bytes = c->esize * (size_t)c->dwd.numel;
    void *first = malloc(bytes ? bytes : 1);
    if (!first) {
        snprintf(msg, msg_len, "out of host memory");
        return 0;
    }
    int ok = 1;
    const int orders = test_order_count_for_determinism();
    for (int run = 0; ok && run < 2 * orders; ++run) {
        const int order = run % orders;
        test_order_apply(order);
        const convnd_status st = test_wgrad_launch(c, spec, launcher);
        char why[384] = "";
        if (st != CONVND_OK) {
            snprintf(msg, msg_len, "%s run %d (order %s): %s", spec, run, test_order_name(order),
                     convnd_last_error());
            ok = 0;
        } else if (!test_wgrad_check(c, why, sizeof why)) {
            snprintf(msg, msg_len, "%s run %d (order %s): %s", spec, run, test_order_name(order),
                     why);
            ok = 0;
        } else if (run == 0) {
            memcpy(first, c->hdw, bytes);
        } else if (memcmp(first, c->hdw, bytes) != 0) {
            int64_t i = 0;
            while (memcmp((char *)first + i * c->esize, (char *)c->hdw + i * c->esize, c->esize) ==
                   0)
                ++i;
            snprintf(msg, msg_len,
                     "%s run %d (order %s) differs bit for bit from run 0 (order %s): first at dw "
                     "element %lld, %.9g vs %.9g",
                     spec, run, test_order_name(order), test_order_name(0), (long long)i,
                     convnd_ref_load(c->p.dtype, c->hdw, i), convnd_ref_load(c->p.dtype, first, i));
            ok = 0;
        }
    }
    test_order_apply(0);
    free(first);
    return ok;
}

double test_wgrad_worst(const test_wgrad_case *c, const void *other) {
    const test_tolerance tol = test_tolerance_for(&c->p);
    double worst = 0.0;
    for (int64_t i = 0; i < c->dwd.numel; ++i) {
        const double v = convnd_ref_load(c->p.dtype, c->hdw, i);
        const double want = other ? convnd_ref_load(c->p.dtype, other, i) : c->ref[i];
        const double bound = (other ? 2.0 : 1.0) * test_tolerance_bound(&tol, c->ref[i], c->mag[i]);
        if (!isfinite(v) || !isfinite(want)) return INFINITY;
        const double r = bound > 0 ? fabs(v - want) / bound : (v == want ? 0.0 : INFINITY);
        if (r > worst) worst = r;
    }
    return worst;
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
