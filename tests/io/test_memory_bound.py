"""A 20000 x 20000 input does not exhaust memory: the build's peak RSS stays far below a full decode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# The child reports its own high-water mark (VmHWM belongs to the address space made at exec, so unlike the rusage
# of a child it does not include the parent's pages at fork time).
_CHILD = """
import sys
from corruptgen.cli import main
rc = main(sys.argv[1:])
hwm = [line for line in open('/proc/self/status') if line.startswith('VmHWM:')][0].split()[1]
print('PEAK_KIB', hwm)
sys.exit(rc)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_huge_jpeg_build_peak_rss_is_bounded(tmp_path: Path, huge_jpeg: bytes) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "huge.jpg").write_bytes(huge_jpeg)  # 20000 x 20000 grey: 400 MB as grey, 1.2 GB as RGB
    args = [sys.executable, "-c", _CHILD, "build", "syn2nat", "--source", f"imagefolder:{folder}", "--subsets",
            "posterize", "--out", str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    run = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2 and "no samples: 1 of 1 input skipped" in run.stderr, run.stderr[-2000:]
    peak_mib = int(run.stdout.split("PEAK_KIB")[1].split()[0]) / 1024
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"  # refused from its header (a full decode peaks at ~2.6 GiB)
    skipped = json.loads((tmp_path / "out/syn2nat/manifest.json").read_text())["skipped"]
    assert [s["reason"] for s in skipped] == ["image too large: 20000x20000 pixels > limit of 100000000 (--max-pixels)"]
