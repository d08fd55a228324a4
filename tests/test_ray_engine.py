"""The Ray engine writes the same bytes as a local build and resumes like one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import corruptgen

ray = pytest.importorskip("ray", reason="Ray is part of the test extra: pip install -e '.[test]'")

KW = dict(subsets="solarize,iso_noise,random_rain", shard_size=3)
#: The killed builds: 6 subsets (clean included) x 10 photos, one photo per shard, 60 shards.
KILLED = dict(subsets="solarize,iso_noise,random_rain,posterize,random_fog", shard_size=1)
KILLED_ARGS = ["build", "syn2nat", "--subsets", KILLED["subsets"], "--shard-size", "1", "--no-progress",
               "--engine", "ray"]  # fmt: skip


def shard_hashes(root):
    manifest = json.loads((root / "manifest.json").read_text())
    return {p: r["sha256"] for p, r in manifest["shards"].items()}, (root / "manifest.json").read_bytes()


def test_ray_build_equals_local_build(tmp_path):
    corruptgen.build("syn2nat", out=tmp_path / "local", workers=2, **KW)
    result = corruptgen.build("syn2nat", out=tmp_path / "ray", engine="ray",
                              ray=corruptgen.RayOptions(local_cpus=2), **KW)  # fmt: skip
    assert result.written_shards == 4 * 4
    local, ray_ = shard_hashes(tmp_path / "local/syn2nat"), shard_hashes(tmp_path / "ray/syn2nat")
    assert local == ray_  # every shard's sha256 and the manifest itself
    assert corruptgen.verify(tmp_path / "ray/syn2nat").ok


def test_killed_ray_build_resumes_to_identical_bytes(tmp_path):
    args = [sys.executable, "-m", "corruptgen", *KILLED_ARGS, "--out", str(tmp_path / "ray")]
    env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1"}
    proc = subprocess.Popen(args, env=env, start_new_session=True)
    out = tmp_path / "ray/syn2nat"
    deadline = time.time() + 180
    while time.time() < deadline and len(list(out.rglob("*.tar"))) < 15:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its local Ray workers
    proc.wait()
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
    subprocess.run(args, env=env, check=True, timeout=600)
    corruptgen.build("syn2nat", out=tmp_path / "local", **KILLED)
    assert shard_hashes(out) == shard_hashes(tmp_path / "local/syn2nat")


def _ray_task_pids() -> list[int]:
    """PIDs of Ray worker processes currently running a chunk task (Ray titles them ``ray::_ray_chunk``)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if fh.read().startswith(b"ray::_ray_chunk"):
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds Ray workers through /proc")
def test_killed_ray_worker_is_retried_to_identical_bytes(tmp_path):
    args = [sys.executable, "-m", "corruptgen", *KILLED_ARGS, "--out", str(tmp_path / "ray")]
    env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1"}
    proc = subprocess.Popen(args, env=env, start_new_session=True)
    killed, deadline = [], time.time() + 180
    try:
        while not killed and time.time() < deadline and proc.poll() is None:
            for pid in _ray_task_pids()[:1]:
                os.kill(pid, signal.SIGKILL)  # a worker dies in the middle of a chunk task
                killed.append(pid)
            time.sleep(0.05)
        assert proc.wait(timeout=600) == 0  # Ray retried the task; the driver finished the build
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert killed, "no Ray chunk task was seen running"
    corruptgen.build("syn2nat", out=tmp_path / "local", **KILLED)
    assert shard_hashes(tmp_path / "ray/syn2nat") == shard_hashes(tmp_path / "local/syn2nat")
