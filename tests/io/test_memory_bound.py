"""A 20000 x 20000 input does not exhaust memory: the build's peak RSS stays far below a full decode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 for the child's own peak RSS")
def test_huge_jpeg_build_peak_rss_is_bounded(tmp_path: Path, huge_jpeg: bytes) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "huge.jpg").write_bytes(huge_jpeg)  # 20000 x 20000 grey: 400 MB as grey, 1.2 GB as RGB
    args = [sys.executable, "-m", "corruptgen", "build", "syn2nat", "--source", f"imagefolder:{folder}",
            "--subsets", "posterize", "--out", str(tmp_path / "out"), "--no-progress", "--strict"]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read().decode()[-2000:]
    peak_mib = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"  # DCT-scaled decode: ~1/64 of the pixels
