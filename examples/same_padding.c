/* Binds a PyTorch-style conv2d(padding="same") with an even 4x4 kernel onto convnd's canonical
 * problem and prints it with the output shape and strides. "same" with an even kernel needs
 * asymmetric padding (1 before, 2 after), which convnd expresses directly. */
#include <convnd.h>
#include <convnd_bind.h>

#include <inttypes.h>
#include <stdio.h>

static void print_tensor(const char *name, const convnd_tensor_desc *d) {
    printf("  %-4s shape [", name);
    for (int32_t i = 0; i < d->rank; ++i) printf("%s%" PRId64, i ? ", " : "", d->shape[i]);
    printf("]  strides [");
    for (int32_t i = 0; i < d->rank; ++i) printf("%s%" PRId64, i ? ", " : "", d->strides[i]);
    printf("]\n");
}

int main(void) {
    /* torch.nn.functional.conv2d(x, w, bias, padding="same"), x: [8, 64, 56, 56] channels-last,
     * w: [128, 64, 4, 4] */
    const int64_t x_shape[] = {8, 64, 56, 56};
    const int64_t w_shape[] = {128, 64, 4, 4};
    convnd_shape input = convnd_shape_of(4, x_shape);
    convnd_shape weight = convnd_shape_of(4, w_shape);
    convnd_problem p;
    convnd_status st = convnd_bind_torch_conv_padding_mode(
        2, &input, &weight, 128, NULL, CONVND_TORCH_PADDING_SAME, NULL, 1, &p);
    if (st != CONVND_OK) {
        fprintf(stderr, "bind failed: %s: %s\n", convnd_status_string(st), convnd_last_error());
        return 1;
    }
    p.dtype = CONVND_BF16;
    p.x_layout = CONVND_CHANNELS_LAST;
    p.w_layout = CONVND_CHANNELS_LAST;

    char text[512];
    convnd_problem_string(&p, text, sizeof text);
    printf("conv2d(padding=\"same\"), 4x4 kernel, bound to the canonical problem:\n  %s\n", text);

    const char *names[] = {"x", "w", "bias", "y"};
    const convnd_tensor which[] = {CONVND_X, CONVND_W, CONVND_BIAS, CONVND_Y};
    for (int i = 0; i < 4; ++i) {
        convnd_tensor_desc d;
        st = convnd_tensor_describe(&p, which[i], &d);
        if (st != CONVND_OK) {
            fprintf(stderr, "%s: %s\n", convnd_status_string(st), convnd_last_error());
            return 1;
        }
        print_tensor(names[i], &d);
    }
    double flops = 0, bytes = 0;
    convnd_flops(&p, &flops);
    convnd_min_bytes(&p, &bytes);
    printf("  %.3f GFLOP, %.2f MB minimum traffic\n", flops * 1e-9, bytes * 1e-6);
    return 0;
}
