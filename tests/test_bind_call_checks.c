/* convnd_check_call: required pointers and forbidden aliasing (SPEC sections 5 and 8), checked
 * before any launch so an error never writes y. Pointers are host buffers carved into ranges;
 * nothing is dereferenced. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "problem_internal.h"
#include "test_bind_expect.h"

/* f32, x [1, 2, 4, 4] = 128 B, w [3, 2, 3, 3] = 216 B, y [1, 3, 2, 2] = 48 B, bias 12 B. */
static convnd_problem small_problem(void) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.C_in = 2;
    p.C_out = 3;
    p.input[0] = p.input[1] = 4;
    p.kernel[0] = p.kernel[1] = 3;
    p.has_bias = 1;
    p.has_z = 1;
    p.beta = 1.0f;
    return p;
}

static _Alignas(16) unsigned char arena[4096];
#define X (arena + 0)
#define W (arena + 256)
#define B (arena + 512)
#define Z (arena + 768)
#define Y (arena + 1024)

Test(call_checks, separate_buffers_pass) {
    const convnd_problem p = small_problem();
    expect_ok(convnd_check_call(&p, X, W, B, Z, Y));
    /* z == y exactly: the in-place residual */
    expect_ok(convnd_check_call(&p, X, W, B, Y, Y));
    /* inputs may overlap each other (all read-only), and touch y without overlapping it */
    expect_ok(convnd_check_call(&p, X, X, X, Z, X + 216)); /* w ends at X + 216 */
    expect_ok(convnd_check_call(&p, Y + 48, W, B, Z, Y));
}

Test(call_checks, null_required_pointers) {
    const convnd_problem p = small_problem();
    expect_status(convnd_check_call(&p, NULL, W, B, Z, Y), CONVND_ERR_NULL_POINTER,
                  "x is NULL but the problem reads 128 bytes");
    expect_status(convnd_check_call(&p, X, NULL, B, Z, Y), CONVND_ERR_NULL_POINTER,
                  "w is NULL but the problem reads 216 bytes");
    expect_status(convnd_check_call(&p, X, W, NULL, Z, Y), CONVND_ERR_NULL_POINTER, "bias is NULL",
                  "(has_bias=1)");
    expect_status(convnd_check_call(&p, X, W, B, NULL, Y), CONVND_ERR_NULL_POINTER, "z is NULL",
                  "(has_z=1)");
    expect_status(convnd_check_call(&p, X, W, B, Z, NULL), CONVND_ERR_NULL_POINTER,
                  "y is NULL but the problem writes 48 bytes");
    /* bias and z may be NULL when the problem does not read them */
    convnd_problem q = small_problem();
    q.has_bias = 0;
    q.has_z = 0;
    q.beta = 0.0f;
    expect_ok(convnd_check_call(&q, X, W, NULL, NULL, Y));
}

Test(call_checks, empty_tensors_may_be_null) {
    convnd_problem p = small_problem();
    p.N = 0; /* x, y and z are empty; w and bias are not */
    expect_ok(convnd_check_call(&p, NULL, W, B, NULL, NULL));
    expect_status(convnd_check_call(&p, NULL, NULL, B, NULL, NULL), CONVND_ERR_NULL_POINTER,
                  "w is NULL");
    p.N = 1;
    p.C_in = p.C_out = 0; /* everything is empty */
    expect_ok(convnd_check_call(&p, NULL, NULL, NULL, NULL, NULL));
}

Test(call_checks, forbidden_aliasing) {
    const convnd_problem p = small_problem();
    expect_status(convnd_check_call(&p, X, W, B, Z, X + 64), CONVND_ERR_ALIASING, "x [",
                  "+128 bytes) overlaps y [", "+48 bytes)");
    expect_status(convnd_check_call(&p, X, W, B, Z, W + 200), CONVND_ERR_ALIASING, "w [");
    expect_status(convnd_check_call(&p, X, W, Y + 44, Z, Y), CONVND_ERR_ALIASING, "bias [");
    /* z overlapping y without being y */
    expect_status(convnd_check_call(&p, X, W, B, Y + 4, Y), CONVND_ERR_ALIASING, "z [",
                  "only z == y exactly may alias y");
    expect_status(convnd_check_call(&p, X, W, B, Y - 4, Y), CONVND_ERR_ALIASING, "z [");
    /* y == x exactly is still forbidden: only z may be y */
    expect_status(convnd_check_call(&p, Y, W, B, Z, Y), CONVND_ERR_ALIASING, "x [");
    /* a bias overlapping y is fine when the problem does not read a bias */
    convnd_problem q = small_problem();
    q.has_bias = 0;
    expect_ok(convnd_check_call(&q, X, W, Y, Z, Y));
}

Test(call_checks, invalid_problem_is_reported_first) {
    convnd_problem p = small_problem();
    p.stride[0] = 0;
    expect_status(convnd_check_call(&p, X, W, B, Z, Y), CONVND_ERR_INVALID_ARGUMENT,
                  "stride[0]=0 must be >= 1");
    expect_status(convnd_check_call(NULL, X, W, B, Z, Y), CONVND_ERR_NULL_POINTER,
                  "problem is NULL");
}
