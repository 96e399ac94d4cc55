#!/usr/bin/env bash
# Installs what the Python package's tests need when missing: PyTorch, torchvision (the real
# models of python/tests/test_torchvision.py), NumPy and pytest from PyPI (the CPU code is enough:
# the tests run on convnd's emulated device), diffusers (the video VAEs of
# python/tests/test_video_vaes.py; pinned: the adapters' tests name its classes). Used by
# tests/run.sh. torch and torchvision are installed together so that pip picks a matching pair.
set -euo pipefail
if ! python3 -c 'import torch, torchvision, numpy, pytest' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing torch torchvision numpy pytest"
  python3 -m pip install -q torch torchvision numpy pytest
fi
if ! python3 -c 'import diffusers; assert diffusers.__version__ == "0.42.1"' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing diffusers==0.42.1"
  python3 -m pip install -q diffusers==0.42.1
fi
# tests/run.sh installs the package from a wheel it builds (python -m build, setuptools' wheel)
if ! python3 -c 'import build, wheel' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing build wheel"
  python3 -m pip install -q build wheel
fi
