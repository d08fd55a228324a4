"""scripts/gpu_check.sh parses, prints its rows with the device, torch and CUDA version (without a CUDA device: "no
CUDA device" rows for the GPU steps, exit 0), and its image comparer (scripts/compare_builds.py) holds two builds to
the contract: byte-identical or at most one grey level apart."""

from __future__ import annotations

import importlib.util
import io
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import corruptgen

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _comparer():
    spec = importlib.util.spec_from_file_location("compare_builds", SCRIPTS / "compare_builds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPTS / "gpu_check.sh")]).returncode == 0


def _gpu_check(tmp_path: Path, **env: str) -> tuple[int, list[list[str]]]:
    """Run the script with ``GPU_CHECK_*`` settings; its exit status and the cells of the table it prints last."""
    done = subprocess.run(["bash", str(SCRIPTS / "gpu_check.sh")], cwd=SCRIPTS.parent, capture_output=True, text=True,
                          env={**os.environ, "GPU_CHECK_OUT": str(tmp_path / "work"), **env}, timeout=600)  # fmt: skip
    table = done.stdout.split("| check | setting | result | device · torch · CUDA |\n|---|---|---|---|\n")[-1]
    return done.returncode, [line.split(" | ") for line in table.splitlines() if line.startswith("| ")]


def _no_cuda() -> bool:
    import torch

    return not torch.cuda.is_available()


@pytest.mark.skipif(not _no_cuda(), reason="a CUDA device runs the GPU steps for real")
def test_without_cuda_the_gpu_steps_print_no_cuda_rows_with_the_versions(tmp_path):
    import torch

    code, rows = _gpu_check(tmp_path, GPU_CHECK_STEPS="optics psf pgd tests bench")
    assert code == 0
    assert [r[0] for r in rows] == ["| OpticsBench end to end (cuda)", "| PSF convolution (cuda)", "| PGD-10 (cuda)",
                                    "| pytest -m cuda", "| bench --device cuda"]  # fmt: skip
    for cells in rows:
        assert len(cells) == 4 and cells[2] == "skipped: no CUDA device"
        assert cells[3] == f"no CUDA device · torch {torch.__version__} · CUDA none |"


@pytest.mark.slow
def test_the_opticsbench_row_measures_a_real_build(tmp_path):
    """The headline row on the CPU (``GPU_CHECK_DEVICE=cpu``: how the script is checked where there is no GPU)."""
    code, rows = _gpu_check(tmp_path, GPU_CHECK_DEVICE="cpu", GPU_CHECK_STEPS="optics", GPU_CHECK_OPTICS_IMAGES="2",
                            GPU_CHECK_OPTICS_WORKERS="1", GPU_CHECK_OPTICS_BATCH="2")  # fmt: skip
    assert code == 0 and len(rows) == 1
    check, setting, result, _ = rows[0]
    assert check == "| OpticsBench end to end (cpu)" and setting.startswith("2 inputs, 224 px, 25x25 kernels")
    assert re.fullmatch(
        r"\*\*[\d,]+ samples/s\*\* for the whole command \(42 samples in [\d.]+ s\); [\d,]+ samples/s "
        r"from the first task to the last \([\d.]+ s\)",
        result,
    ), result  # 2 inputs x (20 + clean)


def _shift_first_image(build: Path, delta: int) -> None:
    """Rewrite the first image of the first shard as a PNG-exact copy shifted by ``delta`` grey levels."""
    shard = sorted((build / "data").rglob("*.tar"))[0]
    with tarfile.open(shard) as tar:
        entries = [(info, tar.extractfile(info).read()) for info in tar if info.isfile()]
    with tarfile.open(shard, "w") as tar:
        done = False
        for info, data in entries:
            if not done and info.name.endswith(".png"):
                image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(np.int16)
                buf = io.BytesIO()
                Image.fromarray(np.clip(image + delta, 0, 255).astype(np.uint8)).save(buf, format="PNG")
                data, done = buf.getvalue(), True
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert done


@pytest.fixture(scope="module")
def png_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cmp")
    corruptgen.build("syn2nat", out=out / "a", subsets="solarize", limit=1, image_format="png", clean=False)
    return out / "a" / "syn2nat"


@pytest.mark.parametrize(("delta", "ok"), [(0, True), (1, True), (5, False)])
def test_compare_builds_contract(png_build, tmp_path, delta, ok):
    other = tmp_path / "b"
    shutil.copytree(png_build, other)
    if delta:
        _shift_first_image(other, delta)
    rows, good = _comparer().compare(png_build, other, tolerance=1)
    assert good is ok
    assert rows[0].startswith("| solarize | 1 | ") and f"| {0 if delta else 1} | {delta} | 0 |" in rows[0]
