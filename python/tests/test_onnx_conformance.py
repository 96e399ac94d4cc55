"""ONNX's own node test cases for Conv, ConvTranspose and CausalConvWithState
(onnx.backend.test.case.node, generated from the specification's reference), each run through
convnd's ONNX bindings (convnd.onnx: the C rules, then convnd's kernels on the emulated device or
the GPU) and compared with ONNX's expected outputs. onnx is a pinned test dependency
(tests/install_python_deps.sh)."""
import warnings

import numpy as np
import onnx  # a test dependency: a missing one fails here, never skips
import pytest
import torch

import convnd

# What this onnx release ships for the three operators; a new release that adds or drops cases
# changes these, and the test says so instead of passing on fewer.
SHIPPED = {"Conv": 6, "ConvTranspose": 11, "CausalConvWithState": 13}


def _cases():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other operators' generators warn about casts
        cases = collect_testcases(None)  # the filter argument only applies to a first call
    return [c for c in cases
            if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type in SHIPPED]


CASES = _cases()


def test_every_shipped_case_is_collected():
    counts = {op: sum(c.model.graph.node[0].op_type == op for c in CASES) for op in SHIPPED}
    print(f"ONNX {onnx.__version__} node cases: {counts}, {len(CASES)} in all")
    assert counts == SHIPPED


def _tolerance(dtype, expected):
    scale = float(np.abs(expected.astype(np.float64)).max()) if expected.size else 0.0
    # float32: f32 accumulation over a few hundred terms; float16: the f16 store (2^-11)
    rel = {np.float32: 1e-5, np.float16: 2e-3}[dtype.type]
    return rel * max(scale, 1.0)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_shipped_case(case):
    node = case.model.graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    for inputs, expected in case.data_sets:
        it = iter(inputs)
        tensors = [torch.from_numpy(np.ascontiguousarray(next(it))) if name else None
                   for name in node.input]
        got = convnd.onnx.run(node.op_type, tensors, attrs)
        assert len(got) == len(expected)
        for name, g, e in zip(node.output, got, expected):
            assert tuple(g.shape) == e.shape, f"{case.name}: {name} {tuple(g.shape)} vs {e.shape}"
            assert g.dtype == torch.from_numpy(e).dtype, f"{case.name}: {name} dtype {g.dtype}"
            diff = np.abs(g.double().numpy() - e.astype(np.float64))
            tol = _tolerance(e.dtype, e)
            assert diff.size == 0 or diff.max() <= tol, \
                f"{case.name}: {name} max |diff| {diff.max():.3g} > {tol:.3g}"
