"""scripts/gpu_check.sh parses, and its image comparer (scripts/compare_builds.py) holds two builds to the contract:
byte-identical or at most one grey level apart."""

from __future__ import annotations

import importlib.util
import io
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
