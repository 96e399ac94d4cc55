"""Shared helpers: fresh random inputs (the seed is printed so a failure can be replayed with
CONVND_TEST_SEED), both emulated-device thread orders, and dtype-derived tolerances."""
import os
import random

import pytest
import torch

import convnd

SEED = int(os.environ.get("CONVND_TEST_SEED", random.SystemRandom().randrange(1 << 30)))
print(f"convnd python tests: CONVND_TEST_SEED={SEED}")

# Unit roundoff of each dtype's significand.
UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


@pytest.fixture(params=[0, 1], ids=["emu_forward_order", "emu_reverse_order"])
def emu_order(request):
    """Each test using this runs with the emulated device's threads in forward and in reverse
    order between barriers, so a missing barrier shows up as a wrong result."""
    convnd._C.emu_set_order(request.param, 0)
    yield request.param
    convnd._C.emu_set_order(0, 0)


def rng(*salt):
    return random.Random(hash((SEED,) + salt))


def assert_close_to_reference(got, ref, ref_abs, reduction, dtype):
    """`got` (dtype) against a float64 reference computed from the same (rounded) inputs.

    Accumulation is in f32 for every dtype: a sum of `reduction` products, each exact in f32 or
    rounded once, errs by at most reduction * u32 * sum|x||w| (`ref_abs`, the conv of the
    absolute values; the classic gamma_n bound). The result is then rounded once to dtype (u)."""
    u32, u = UNIT_ROUNDOFF[torch.float32], UNIT_ROUNDOFF[dtype]
    bound = (reduction + 2) * u32 * ref_abs + u * ref.abs() + 1e-30
    err = (got.double() - ref).abs()
    worst = (err / bound).max().item() if err.numel() else 0.0
    assert worst <= 1.0, (f"error {err.max().item():.3e} exceeds the {dtype} bound by x{worst:.2f} "
                          f"(reduction {reduction}; CONVND_TEST_SEED={SEED})")


def pytest_terminal_summary(terminalreporter):
    """The count of ONNX's own node cases that ran through convnd (test_onnx_conformance.py),
    printed even under -q: CI reports it."""
    ran = {}
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if "test_onnx_conformance.py::test_shipped_case[" in getattr(report, "nodeid", "") \
                    and report.when == "call":
                ran[outcome] = ran.get(outcome, 0) + 1
    if ran:
        total = sum(ran.values())
        terminalreporter.write_line(
            f"ONNX node cases (Conv, ConvTranspose, CausalConvWithState) through convnd: "
            f"{ran.get('passed', 0)} of {total} passed")
