#!/usr/bin/env bash
# Install corruptgen into the active Python environment.
#   bash scripts/install.sh        # runtime
#   bash scripts/install.sh test   # + test tools (pytest, ruff)
# torch is installed first, pinned, only where none is present: an unpinned torch requirement would pull
# several GB of CUDA packages, and an existing (e.g. CUDA) torch is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
    "$PY" -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
fi
if [ "${1:-}" = "test" ]; then
    "$PY" -m pip install -q -e ".[test]"
else
    "$PY" -m pip install -q -e .
fi
# ImageNet-C frost textures are read from the imagecorruptions package's data files (its code is never imported;
# its own requirements — numba, opencv-python — are not needed), so it is installed without dependencies.
"$PY" -m pip install -q --no-deps "imagecorruptions==1.1.2"
# The attack tests compare corruptgen's attacks with torchattacks 3.5.1. Its metadata requires torchvision (which
# does not load on the CPU torch and would pull a CUDA torch), but its attack modules import without it: installed
# without dependencies (its other requirements, numpy, scipy, requests and tqdm, are already here).
if [ "${1:-}" = "test" ]; then
    "$PY" -m pip install -q --no-deps "torchattacks==3.5.1"
fi
# pyenv shims only expose new console scripts (corruptgen) after a rehash
if command -v pyenv >/dev/null 2>&1; then pyenv rehash >/dev/null 2>&1 || true; fi
