"""The same build command again: re-running a finished build, and resuming one killed (SIGKILL, driver and workers)
at each phase boundary, exits 0 and leaves the bytes of an uninterrupted build (shards, manifest, card), whatever the
worker count or engine of either run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from build_faults import DRIVER, PHASE_ENV

from corruptgen.cli import main

#: clean + solarize x 3 chunks of 2 photos: 6 shards, and the card (README.md and images/sample_grid.png)
ARGS = ["build", "syn2nat", "--subsets", "solarize", "--limit", "6", "--shard-size", "2", "--no-progress"]
SHARDS = 6


def files(root: Path) -> dict[str, bytes]:
    """Every file of a build output folder (lock file, partial files and card included), by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    assert main([*ARGS, "--out", str(out)]) == 0
    return out


def _engine(how: int | str) -> list[str]:
    if how == "ray":
        pytest.importorskip("ray", reason="Ray is part of the test extra")
        return ["--engine", "ray", "--workers", "2"]  # nothing left to render: Ray is not even started
    return ["--workers", str(how)]


def _kill_at(phase: str, workers: int, out: Path) -> dict:
    """Run the build until ``phase``, where it is killed; return its manifest."""
    here = str(Path(__file__).parent)
    env = {**os.environ, PHASE_ENV: phase}
    proc = subprocess.run([sys.executable, "-c", DRIVER, here, *ARGS, "--workers", str(workers), "--out", str(out)],
                          env=env, start_new_session=True, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return json.loads((out / "syn2nat/manifest.json").read_text())


@pytest.mark.parametrize(
    ("phase", "workers", "resume"),
    [("first-shard", 4, 1), ("mid-shard", 1, 2), ("mid-shard", 2, 4), ("last-shard", 1, 2), ("last-shard", 2, 1),
     ("last-shard", 4, "ray"), ("card", 2, 4)],
)  # fmt: skip
def test_a_build_killed_at_a_phase_boundary_resumes_to_the_bytes_of_an_uninterrupted_one(
    tmp_path, capsys, reference, phase, workers, resume
):
    out = tmp_path / "out"
    manifest = _kill_at(phase, workers, out)
    left = files(out / "syn2nat")
    tars = [rel for rel in left if rel.endswith(".tar")]
    if phase == "first-shard":
        assert not manifest["complete"] and not manifest["shards"] and not tars
    elif phase == "mid-shard":
        assert not manifest["complete"] and any(rel.endswith(".tar.partial") for rel in left), sorted(left)
    elif phase == "last-shard":
        assert not manifest["complete"] and len(manifest["shards"]) == len(tars) == SHARDS
    else:
        assert manifest["complete"] and "README.md" not in left and "images/sample_grid.png" in left
    assert main([*ARGS, *_engine(resume), "--out", str(out)]) == 0
    assert files(out / "syn2nat") == files(reference / "syn2nat")
    written = 0 if phase in ("last-shard", "card") else None
    summary = capsys.readouterr().out
    assert f"in {SHARDS} shards (" in summary and (written is None or f"(0 written, {SHARDS} reused)" in summary)


@pytest.mark.parametrize("how", [1, 2, 4, "ray"])
def test_a_finished_build_run_again_renders_nothing_and_keeps_its_bytes(tmp_path, capsys, reference, how):
    shutil.copytree(reference, tmp_path / "out")
    assert main([*ARGS, *_engine(how), "--out", str(tmp_path / "out")]) == 0
    assert files(tmp_path / "out/syn2nat") == files(reference / "syn2nat")
    assert f"(0 written, {SHARDS} reused)" in capsys.readouterr().out


def test_a_rerun_killed_before_its_manifest_leaves_the_finished_build_as_it_was(tmp_path, reference):
    """A finished build stays finished (``push`` and ``card`` refuse an unfinished one) when its re-run is killed."""
    shutil.copytree(reference, tmp_path / "out")
    assert _kill_at("last-shard", 1, tmp_path / "out")["complete"]
    lock = ".corruptgen.lock"  # the killed run's record of itself
    assert {k: v for k, v in files(tmp_path / "out/syn2nat").items() if k != lock} == {
        k: v for k, v in files(reference / "syn2nat").items() if k != lock
    }
