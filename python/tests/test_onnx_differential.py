"""convnd's ONNX Conv and ConvTranspose against onnxruntime (pinned, CPU provider) on random
nodes, and the classes where ONNX's own implementations disagree, each a documented decision
(docs/api.md, "Where ONNX's implementations disagree"): convnd follows the ONNX specification;
convnd.onnx.run(..., onnxruntime_same=True) gives onnxruntime's result where a user would want it.

Seen with onnx 1.23.2 and onnxruntime 1.32.0:
(a) ConvTranspose with output_shape and output_padding: the spec splits the total padding
    (convnd); onnxruntime agrees; onnx.reference takes zero pads and its size check fails.
(b) ConvTranspose with SAME_* and a kernel extent below the stride (negative total padding): the
    spec and onnx.reference give I*S (convnd); onnxruntime clamps the padding at 0 and gives
    S(I-1)+E (convnd with onnxruntime_same=True).
(c) onnxruntime refuses Conv with dilation and SAME_*, and ConvTranspose with output_padding >=
    max(stride, dilation); the spec allows both and so does convnd (equal to onnx.reference for
    the first; for the second onnx.reference fails its own size check)."""
import random
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import convnd
from conftest import SEED

ort.set_default_logger_severity(4)  # refusals are expected below; keep their logs out


def _model(op, x_shape, w_shape, attrs):
    node = helper.make_node(op, ["X", "W"], ["Y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape),
                      helper.make_tensor_value_info("W", TensorProto.FLOAT, w_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _inputs(x_shape, w_shape, seed):
    """Seeded f32 X and W of these shapes."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(x_shape).astype(np.float32),
            rng.standard_normal(w_shape).astype(np.float32))


def _onnxruntime(model, x, w):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x, "W": w})[0]


def _reference(model, x, w):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, {"X": x, "W": w})[0]


def _convnd(op, x, w, attrs, **kw):
    return convnd.onnx.run(op, [torch.from_numpy(x), torch.from_numpy(w)], attrs, **kw)[0].numpy()


def _close(a, b):
    if a.shape != b.shape:
        return False
    scale = max(float(np.abs(b).max()) if b.size else 0.0, 1.0)
    return a.size == 0 or float(np.abs(a - b).max()) <= 1e-5 * scale


def _extent(k, d):
    return (k - 1) * d + 1


def _random_node(rng):
    """A random Conv or ConvTranspose node (shapes and attributes), inside what onnxruntime runs
    (no dilation with SAME_*, output_padding below max(stride, dilation))."""
    op = rng.choice(["Conv", "ConvTranspose"])
    dims = rng.choice([1, 2, 2, 3])
    group = rng.choice([1, 1, 2])
    c, m = group * rng.randint(1, 3), group * rng.randint(1, 3)
    k = [rng.randint(1, 3) for _ in range(dims)]
    s = [rng.randint(1, 3) for _ in range(dims)]
    auto_pad = rng.choice(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    d = [1] * dims if auto_pad.startswith("SAME") else [rng.randint(1, 2) for _ in range(dims)]
    size = [rng.randint(_extent(k[i], d[i]), 7) for i in range(dims)]
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "group": group}
    if auto_pad == "NOTSET":
        attrs["pads"] = [rng.randint(0, k[i // 2] - 1) for i in range(2 * dims)]
    else:
        attrs["auto_pad"] = auto_pad
    if op == "Conv":
        return op, [1, c] + size, [m, c // group] + k, attrs
    if rng.random() < 0.5:
        attrs["output_padding"] = [rng.randint(0, s[i] - 1) for i in range(dims)]
    op_pad = attrs.get("output_padding", [0] * dims)
    full = [(size[i] - 1) * s[i] + op_pad[i] + _extent(k[i], d[i]) for i in range(dims)]
    if auto_pad == "NOTSET" and rng.random() < 0.3:
        attrs["output_shape"] = [max(1, full[i] - rng.randint(0, 1)) for i in range(dims)]
        attrs.pop("pads")
    elif auto_pad == "NOTSET" and any(full[i] - attrs["pads"][i] - attrs["pads"][i + dims] < 1
                                      for i in range(dims)):
        return _random_node(rng)  # no output: not a node to compare on
    return op, [1, c] + size, [c, m // group] + k, attrs


def _same_below_stride(op, attrs):
    """Class (b): ConvTranspose, SAME_*, no output_shape, some dim's kernel extent (plus
    output_padding) below the stride."""
    if op != "ConvTranspose" or not attrs.get("auto_pad", "").startswith("SAME") or \
            "output_shape" in attrs:
        return False
    op_pad = attrs.get("output_padding", [0] * len(attrs["strides"]))
    return any(_extent(k, d) + p < s for k, d, p, s in
               zip(attrs["kernel_shape"], attrs["dilations"], op_pad, attrs["strides"]))


def test_random_nodes_agree_with_onnxruntime():
    rng = random.Random(SEED)
    agreed = below_stride = 0
    for i in range(150):
        op, xs, ws, attrs = _random_node(rng)
        x, w = _inputs(xs, ws, (SEED, i))
        what = f"node {i}: {op} X{xs} W{ws} {attrs} (CONVND_TEST_SEED={SEED})"
        try:
            want = _onnxruntime(_model(op, xs, ws, attrs), x, w)
        except Exception as e:  # the generator stays inside what onnxruntime runs
            raise AssertionError(f"{what}: onnxruntime refused it: {e}") from e
        got = _convnd(op, x, w, attrs)
        if _same_below_stride(op, attrs):
            below_stride += 1
            assert got.shape != want.shape, what  # the spec's I*S, not onnxruntime's
            assert _close(_convnd(op, x, w, attrs, onnxruntime_same=True), want), what
        else:
            assert _close(got, want), what
            agreed += 1
    print(f"random ONNX nodes: {agreed} equal to onnxruntime, {below_stride} of class (b)")
    assert agreed > 100


def test_a_output_shape_with_output_padding_follows_the_spec():
    attrs = {"strides": [2, 2], "output_shape": [6, 6], "output_padding": [1, 1]}
    xs, ws = [1, 1, 3, 3], [1, 1, 3, 3]
    x, w = _inputs(xs, ws, 1)
    model = _model("ConvTranspose", xs, ws, attrs)
    got = _convnd("ConvTranspose", x, w, attrs)
    assert got.shape == (1, 1, 6, 6) and _close(got, _onnxruntime(model, x, w))
    # the spec by hand: total = S(I-1) + output_padding + E - output_shape = 2, split 1 / 1
    full = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2,
                                                output_padding=1)
    assert _close(got, full[:, :, 1:7, 1:7].numpy())
    with pytest.raises(Exception):
        _reference(model, x, w)  # onnx.reference: zero pads, then its own size check fails


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_b_same_with_a_kernel_below_the_stride(auto_pad):
    attrs = {"strides": [3, 3], "auto_pad": auto_pad}
    xs, ws = [1, 2, 4, 4], [2, 3, 2, 2]
    x, w = _inputs(xs, ws, 3)
    model = _model("ConvTranspose", xs, ws, attrs)
    spec = _convnd("ConvTranspose", x, w, attrs)
    assert spec.shape == (1, 3, 12, 12) and _close(spec, _reference(model, x, w))
    runtime = _onnxruntime(model, x, w)
    assert runtime.shape == (1, 3, 11, 11)
    assert _close(_convnd("ConvTranspose", x, w, attrs, onnxruntime_same=True), runtime)


def test_c_what_onnxruntime_refuses_convnd_runs():
    xs, ws = [1, 2, 7, 7], [3, 2, 3, 3]
    attrs = {"dilations": [2, 2], "auto_pad": "SAME_UPPER"}
    x, w = _inputs(xs, ws, 5)
    model = _model("Conv", xs, ws, attrs)
    with pytest.raises(Exception, match="Dilation not supported"):
        _onnxruntime(model, x, w)
    got = _convnd("Conv", x, w, attrs)
    assert got.shape == (1, 3, 7, 7) and _close(got, _reference(model, x, w))

    xs, ws = [1, 2, 4, 4], [2, 3, 3, 3]
    attrs = {"strides": [2, 2], "output_padding": [2, 2]}
    x, w = _inputs(xs, ws, 7)
    with pytest.raises(Exception, match="output_padding"):
        _onnxruntime(_model("ConvTranspose", xs, ws, attrs), x, w)
    got = _convnd("ConvTranspose", x, w, attrs)
    # the spec: S(I-1) + output_padding + E = 2*3 + 2 + 3 = 11, the extra rows bias-only zeros
    full = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2)
    assert got.shape == (1, 3, 11, 11)
    assert _close(got[:, :, :9, :9], full.numpy()) and not got[:, :, 9:, :].any()
