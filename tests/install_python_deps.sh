#!/usr/bin/env bash
# Installs what the Python package's tests need when missing: PyTorch, torchvision (the real
# models of python/tests/test_torchvision.py), NumPy and pytest from PyPI (the CPU code is enough:
# the tests run on convnd's emulated device), diffusers (the video VAEs of
# python/tests/test_video_vaes.py; pinned: the adapters' tests name its classes), onnx (ONNX's
# own node test cases of its convolution operators; pinned). Used by tests/run.sh. torch and
# torchvision are installed together so that pip picks a matching pair.
set -euo pipefail
if ! python3 -c 'import torch, torchvision, numpy, pytest' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing torch torchvision numpy pytest"
  python3 -m pip install -q torch torchvision numpy pytest
fi
if ! python3 -c 'import diffusers; assert diffusers.__version__ == "0.42.1"' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing diffusers==0.42.1"
  python3 -m pip install -q diffusers==0.42.1
fi
# ONNX's own node test cases (python/tests/test_onnx_conformance.py; pinned: the shipped cases
# and their count are this release's)
if ! python3 -c 'import onnx; assert onnx.__version__ == "1.23.2"' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing onnx==1.23.2"
  python3 -m pip install -q onnx==1.23.2
fi
# onnxruntime, the other ONNX implementation convnd's bindings are compared with
# (python/tests/test_onnx_differential.py; pinned: the classes where it differs are this release's)
if ! python3 -c 'import onnxruntime; assert onnxruntime.__version__ == "1.32.0"' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing onnxruntime==1.32.0"
  python3 -m pip install -q onnxruntime==1.32.0
fi
# tests/run.sh installs the package from a wheel it builds (python -m build, setuptools' wheel)
if ! python3 -c 'import build, wheel' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing build wheel"
  python3 -m pip install -q build wheel
fi
