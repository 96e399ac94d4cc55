#!/usr/bin/env bash
# Installs what the Python package's tests need when missing: PyTorch, NumPy and pytest from PyPI
# (the CPU wheel is enough: the tests run on convnd's emulated device). Used by tests/run.sh.
set -euo pipefail
if ! python3 -c 'import torch, numpy, pytest' 2>/dev/null; then
  echo "tests/install_python_deps.sh: installing torch numpy pytest"
  python3 -m pip install -q torch numpy pytest
fi
