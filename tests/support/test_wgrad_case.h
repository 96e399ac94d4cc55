/* One weight-gradient case for tests (SPEC §10): seeded x and dy (and dw_prev) on the host and
 * the device, the exact reference, and a run of conv_nd in wgrad mode with dw poisoned first.
 *
 *   test_wgrad_case c;
 *   test_wgrad_init(&c, &p, z_in_place, seed, err, sizeof err);  p: a CONVND_WGRAD problem
 *   test_wgrad_run(&c, "wgrad_splitk:k8");   conv_nd's status (workspace as the plan needs)
 *   test_wgrad_check(&c, msg, sizeof msg);   1 when every dw element is written and in bounds
 *   test_wgrad_free(&c);
 */
#ifndef CONVND_TEST_WGRAD_CASE_H
#define CONVND_TEST_WGRAD_CASE_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"
#include "launch_abi.h"

typedef struct test_wgrad_case {
    convnd_problem p; /* wgrad mode, y_layout resolved */
    int z_in_place;   /* has_z with z == dw: dw starts out holding dw_prev */
    convnd_tensor_desc xd, dyd, dwd;
    size_t esize;
    void *hx, *hdy, *hz; /* host inputs (hz: dw_prev, when has_z) */
    void *dx, *ddy, *dz, *ddw;
    void *hdw;         /* dw of the last run */
    double *ref, *mag; /* exact dw and magnitudes */
} test_wgrad_case;

int test_wgrad_init(test_wgrad_case *c, const convnd_problem *p, int z_in_place, uint64_t seed,
                    char *err, size_t err_len);
void test_wgrad_free(test_wgrad_case *c);
/* Poisons dw (or writes dw_prev into it when in place) and a workspace of exactly the size
 * convnd_workspace_size reports for spec (NULL: the planner), runs conv_nd, downloads dw. */
convnd_status test_wgrad_run(test_wgrad_case *c, const char *spec);
/* A kernel launcher called directly (a planted-bug build of one, tests/planted/). */
typedef convnd_status (*test_wgrad_launcher)(const convnd_launch_args *a);
/* As test_wgrad_run, or with launcher (not NULL) called directly on the emulated device with
 * spec's configuration and workspace instead of conv_nd. */
convnd_status test_wgrad_launch(test_wgrad_case *c, const char *spec, test_wgrad_launcher launcher);
/* The determinism check: runs spec (through launcher when not NULL) twice in every thread order
 * (at least two orders: test_order_count_for_determinism);
 * 1 when every run is correct and bit-identical to the first, else 0 and msg says where not. */
int test_wgrad_bit_identical(test_wgrad_case *c, const char *spec, test_wgrad_launcher launcher,
                             char *msg, size_t msg_len);
int test_wgrad_check(const test_wgrad_case *c, char *msg, size_t msg_len);
/* The largest |dw - exact| / tolerance of the last run; with other (a host copy of another run's
 * dw) the largest |dw - other| / (the sum of both tolerances, 2x the bound), as test_case_worst.
 * INFINITY when an element is not finite. */
double test_wgrad_worst(const test_wgrad_case *c, const void *other);

/* The problems the determinism check runs on: a long depthwise causal 1-D reduction (few dw
 * elements, many partials each) and a strided dense 2-D one. */
#define TEST_WGRAD_DETERMINISM_PROBLEMS 2
extern const char *const test_wgrad_determinism_problems[TEST_WGRAD_DETERMINISM_PROBLEMS];

#endif
