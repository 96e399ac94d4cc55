"""python -m convnd.selftest runs the self-test shipped in the package, and the torch op obeys the
errata file (docs/errata.md): the planner's choice excluded, the op routes elsewhere with the
same result; that configuration forced, the op raises with the errata's line."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import convnd
from conftest import SEED


def test_python_m_convnd_selftest_runs_the_shipped_program(tmp_path):
    errata = tmp_path / "errata"
    run = subprocess.run([sys.executable, "-m", "convnd.selftest", "--quick", "--quiet",
                          "--only", "direct,igemm_simt", "--errata", str(errata)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    assert summary.startswith("convnd-selftest: 5 configurations, 5 cases: 5 passed, 0 failed"), \
        run.stdout
    assert not errata.exists()
    bad = subprocess.run([sys.executable, "-m", "convnd.selftest", "--only", "no_such"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no_such" in bad.stderr, bad.stderr


def _plan(x, w, schedule=None):
    return convnd.plan_name(x, w, stride=[1, 1], dilation=[1, 1], padding_before=[1, 1],
                            padding_after=[1, 1], schedule=schedule).split(" ")[0]


def _conv(x, w, schedule=None):
    return convnd.conv_nd(x, w, stride=[1, 1], dilation=[1, 1], padding_before=[1, 1],
                          padding_after=[1, 1], schedule=schedule)


def test_the_op_obeys_the_errata(tmp_path, monkeypatch):
    torch.manual_seed(SEED)
    x = torch.randn(1, 32, 8, 8).to(memory_format=torch.channels_last)
    w = torch.randn(64, 32, 3, 3).to(memory_format=torch.channels_last)
    monkeypatch.setenv("CONVND_ERRATA", "off")
    convnd.clear_plan_cache()
    chosen = _plan(x, w)
    errata = tmp_path / "errata"
    errata.write_text(f"# by hand\nexclude {chosen} dtype=f32 layout=channels-last  # seen wrong\n")
    monkeypatch.setenv("CONVND_ERRATA", str(errata))
    convnd.clear_plan_cache()  # plans made before the errata changed are kept until then
    now = _plan(x, w)
    assert now != chosen
    want = F.conv2d(x.double(), w.double(), padding=1)
    y = _conv(x, w)
    assert torch.allclose(y.double(), want, rtol=1e-4, atol=1e-4 * want.abs().max().item())
    with pytest.raises(RuntimeError, match=f"excluded by errata \\({errata}:2\\): seen wrong"):
        _conv(x, w, schedule=chosen)
    errata.write_text("exclude direct colour=red\n")
    convnd.clear_plan_cache()
    with pytest.raises(ValueError, match=f"{errata}:1: unknown key 'colour'"):
        _conv(x, w)
    monkeypatch.setenv("CONVND_ERRATA", "off")
    convnd.clear_plan_cache()
    assert _plan(x, w) == chosen
