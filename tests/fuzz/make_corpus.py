#!/usr/bin/env python3
"""Writes the fuzz target's seed corpus (tests/fuzz/corpus/) in the byte encoding of
tests/fuzz/fuzz_input.h: real problems from the benchmark suite and the bindings' common calls,
plus the edge cases the fuzzer should start next to (zero sizes, 2^31 elements, int64 limits).
Run it after changing the encoding or the entry points; the output is committed."""
import os
import struct
import sys

# fuzz_host.c's entries
RAW, TORCH_CONV, TORCH_MODE, TORCH_TR, TORCH_CONVOLUTION, TORCH__CONVOLUTION, CAUSAL, \
    ONNX_CONV, ONNX_TR, TF_CONV, FOLD_PAD = range(11)

EXTREMES = [
    2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1, (2**63 - 1) // 2, -2**62, 2**62, -2**62,
    2**32, 2**32 - 1, 2**31, 2**31 - 1, 2**31 + 1, -2**31, 2**30, 2**30 + 1,
    3037000499, 3037000500, 2097151, 2097152, 46340, 46341, 1290, 1291, 65535, 65536,
    2**20, 1000000007, -1000000007, 2**31 - 1, -2**31, 2**32 - 1,
]
FLOATS = {0.0: 0, 1.0: 1, -1.0: 2, 0.5: 3, 2.0: 4}


def i64(v):
    """The shortest encoding of v (fuzz_i64)."""
    if -16 <= v < 112:
        return bytes([v + 16])
    if v in EXTREMES:
        return bytes([0x80 + EXTREMES.index(v)])
    if v > 0 and v & (v - 1) == 0:
        return bytes([0xa0 + v.bit_length() - 1])
    if 0 <= v < 65536:
        return bytes([0xe0]) + struct.pack("<H", v)
    return bytes([0xf0]) + struct.pack("<q", v)


def i32(v):
    if -128 <= v < 128 and v != 0x7f:
        return struct.pack("<b", v)
    return bytes([0x7f]) + struct.pack("<i", v)


def f32(v):
    if v in FLOATS:
        return bytes([FLOATS[v]])
    return bytes([0xf0]) + struct.pack("<f", v)


def problem(dims=2, mode=0, N=1, C_in=1, C_out=1, groups=1, I=(1, 1, 1), K=(1, 1, 1),
            S=(1, 1, 1), D=(1, 1, 1), P0=(0, 0, 0), P1=(0, 0, 0), dtype=0, xl=0, wl=0, yl=2,
            bias=0, z=0, alpha=1.0, beta=0.0, act=0, math=0):
    b = i32(dims) + i32(mode) + i64(N) + i64(C_in) + i64(C_out) + i64(groups)
    for lst in (I, K, S, D, P0, P1):
        lst = tuple(lst) + (0,) * (3 - len(lst))
        b += b"".join(i64(v) for v in lst)
    b += i32(dtype) + i32(xl) + i32(wl) + i32(yl) + i32(bias) + i32(z)
    b += f32(alpha) + f32(beta) + i32(act) + i32(math)
    return b


def shp(*v):
    """A shape: its rank, then all CONVND_MAX_RANK entries."""
    return i32(len(v)) + b"".join(i64(x) for x in tuple(v) + (0,) * (5 - len(v)))


def ints(*v):
    if v == (None,):
        return bytes([0])  # absent
    p = tuple(v) + (0,) * (5 - len(v))
    return bytes([1]) + i32(len(v)) + b"".join(i64(x) for x in p)


def pads(*v):
    if v == (None,):
        return bytes([0])
    p = tuple(v) + (0,) * (10 - len(v))
    return bytes([1]) + i32(len(v)) + b"".join(i64(x) for x in p)


NONE = None

# what fuzz_exercise_problem reads after the problem: a tensor kind for describe (7: none),
# problem_string's buffer length, supports() with schedule 0 by name and a 17-byte reason,
# the planner unforced, valid pointers each in its own region, planning unforced
TAIL = i32(7) + bytes([40, 0, 1, 17, 0, 0, 1, 1, 1, 1, 1, 0, 0])


def seeds():
    s = {}
    # benchmark-suite-like problems
    s["raw_resnet_3x3"] = problem(N=32, C_in=64, C_out=64, I=(56, 56), K=(3, 3), P0=(1, 1),
                                  P1=(1, 1), dtype=2)
    s["raw_transposed_3d"] = problem(dims=3, mode=1, N=2, C_in=8, C_out=4, groups=2,
                                     I=(4, 5, 6), K=(3, 2, 3), S=(2, 1, 2), D=(1, 2, 1),
                                     P0=(1, 0, 1), P1=(0, -1, 1), xl=1, bias=1)
    s["raw_depthwise_cl"] = problem(N=4, C_in=96, C_out=96, groups=96, I=(112, 112),
                                    K=(3, 3), S=(2, 2), P0=(1, 1), P1=(1, 1), xl=1, wl=1,
                                    dtype=1, act=2)
    s["raw_conv1d_epilogue"] = problem(dims=1, N=3, C_in=5, C_out=7, I=(100,), K=(9,),
                                       D=(4,), P0=(32,), P1=(0,), bias=1, z=1, alpha=0.5,
                                       beta=2.0, act=3, math=1)
    # zero sizes: valid, nothing to do
    s["raw_zero_batch"] = problem(N=0, C_in=3, C_out=4, I=(5, 5), K=(3, 3))
    s["raw_zero_channels"] = problem(dims=3, N=2, C_in=0, C_out=0, I=(2, 3, 4), K=(1, 1, 1))
    # just past 2^31 elements of y (index64), and the int64 edges
    s["raw_index64_edge"] = problem(dims=2, N=1, C_in=1, C_out=2, I=(32768, 32768),
                                    K=(1, 1))
    s["raw_int64_max_input"] = problem(dims=1, N=1, C_in=1, C_out=1, I=(2**63 - 1,), K=(1,))
    s["raw_huge_padding"] = problem(dims=1, N=1, C_in=1, C_out=1, I=(10,), K=(3,),
                                    P0=(-2**62,), P1=(2**62,))
    s["raw_dilation_overflow"] = problem(dims=2, C_in=1, C_out=1, I=(5, 5),
                                         K=(3037000501, 3), D=(3037000500, 1))
    s["raw_transposed_overflow"] = problem(dims=1, mode=1, C_in=1, C_out=1, I=(2**62,),
                                           K=(1,), S=(4,))
    s["raw_extent_overflow"] = problem(dims=3, N=0, C_in=2097152, C_out=1,
                                       I=(2097152, 2097152, 2), K=(1, 1, 1))
    # valid, with small tensors but a huge implicit GEMM (2^30 groups of 2^30 taps): the
    # schedules' workspace and grid arithmetic must refuse it, not overflow
    s["raw_huge_gemm"] = problem(N=1, C_in=2**30, C_out=2**30, groups=2**30, I=(1, 1),
                                 K=(2**15, 2**15), P0=(2**15 - 1, 2**15 - 1),
                                 P1=(2**15 - 1, 2**15 - 1))
    # valid problems with small tensors and int64-sized paddings or strides: the host-side
    # index-width rules must not overflow (|INT64_MIN|, sums of huge paddings)
    s["raw_pad_int64_limits"] = problem(dims=1, C_in=16, C_out=16, I=(10,), K=(3,),
                                        P0=(-2**63,), P1=(2**63 - 1,))
    s["raw_stride_int64_max"] = problem(dims=3, N=2, C_in=16, C_out=32, I=(4, 5, 10),
                                        K=(1, 2, 3), S=(1, 1, 2**63 - 1), xl=1, wl=1, dtype=1)
    s["raw_transposed_huge_crop"] = problem(dims=2, mode=1, C_in=8, C_out=8, groups=8,
                                            I=(3, 3), K=(3, 3), S=(2, 2),
                                            P0=(2**62, 0), P1=(-2**62, 0), xl=1)
    s["raw_bad_groups"] = problem(C_in=6, C_out=4, groups=4, I=(4, 4), K=(1, 1))
    s["raw_nan_alpha"] = problem(C_in=1, C_out=1, I=(4, 4), K=(1, 1), alpha=float("nan"))
    for k in list(s):
        s[k] = bytes([RAW]) + s[k] + TAIL

    # the bindings (arguments in fuzz_host.c's read order; a leading out-is-NULL byte 0)
    s["torch_conv2d"] = bytes([TORCH_CONV, 0]) + i32(2) + shp(8, 16, 32, 32) + \
        shp(32, 8, 3, 3) + i64(32) + ints(2) + ints(1) + ints(1) + i64(2) + bytes([0])
    s["torch_same"] = bytes([TORCH_MODE, 0]) + i32(2) + shp(1, 3, 9, 9) + shp(8, 3, 4, 4) + \
        i64(-1) + ints(NONE) + i32(1) + ints(2, 1) + i64(1) + bytes([0])
    s["torch_transpose"] = bytes([TORCH_TR, 0]) + i32(3) + shp(2, 4, 3, 5, 7) + \
        shp(4, 3, 3, 3, 3) + i64(3) + ints(2) + ints(1) + ints(1) + i64(1) + ints(NONE) + \
        bytes([0])
    s["torch_convolution"] = bytes([TORCH_CONVOLUTION, 0]) + shp(2, 6, 10) + shp(6, 2, 3) + \
        i64(-1) + ints(1) + ints(1) + ints(2) + i32(1) + ints(0) + i64(3) + bytes([0])
    s["torch__convolution"] = bytes([TORCH__CONVOLUTION, 0]) + shp(1, 4, 7, 7) + \
        shp(8, 4, 3, 3) + i64(8) + ints(1, 2) + ints(1) + ints(1) + i32(0) + ints(NONE) + \
        i64(1) + i32(1) + bytes([0])
    s["causal_conv1d"] = bytes([CAUSAL, 0]) + i32(1) + shp(1, 16, 100) + shp(16, 16, 5) + \
        i64(-1) + ints(NONE) + ints(NONE) + ints(3) + i64(1) + bytes([0])
    s["onnx_conv_same_upper"] = bytes([ONNX_CONV, 0]) + shp(1, 3, 11, 13) + \
        shp(6, 3, 3, 4) + i64(6) + i32(2) + ints(NONE) + i64(1) + ints(3, 4) + pads(NONE) + \
        ints(2, 3) + bytes([0])
    s["onnx_conv_pads"] = bytes([ONNX_CONV, 0]) + shp(2, 4, 9) + shp(4, 2, 3) + i64(-1) + \
        i32(0) + ints(2) + i64(2) + ints(NONE) + pads(1, 2) + ints(1) + bytes([0])
    s["onnx_conv_transpose_output_shape"] = bytes([ONNX_TR, 0]) + shp(1, 2, 5, 5) + \
        shp(2, 3, 3, 3) + i64(-1) + i32(0) + ints(NONE) + i64(1) + ints(NONE) + ints(1, 1) + \
        ints(10, 10) + pads(NONE) + ints(2, 2) + bytes([0])
    s["tf_conv_same_nhwc"] = bytes([TF_CONV, 0]) + shp(1, 10, 10, 3) + shp(3, 3, 3, 8) + \
        i64(8) + ints(1, 2, 2, 1) + i32(1) + ints(NONE) + i32(0) + bytes([0])
    s["tf_conv_causal"] = bytes([TF_CONV, 0]) + shp(2, 20, 4) + shp(3, 4, 6) + i64(-1) + \
        ints(NONE) + i32(2) + ints(2) + i32(0) + bytes([0])
    s["fold_pad"] = bytes([FOLD_PAD]) + problem(C_in=3, C_out=4, I=(12, 10), K=(3, 3)) + \
        pads(1, 1, -1, 2) + i32(0) + f32(0.0)
    s["fold_pad_reflect"] = bytes([FOLD_PAD]) + problem(C_in=3, C_out=4, I=(12, 10),
                                                        K=(3, 3)) + pads(1, 1) + i32(1) + \
        f32(0.0)
    return s


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))
    for name, data in seeds().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds())} seeds to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
