"""The Ray engine writes the same bytes as a local build and resumes like one."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

import corruptgen
from corruptgen.engine.chunk import ChunkTask
from corruptgen.engine.executors import run_tasks
from corruptgen.errors import CorruptgenError

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


def _cluster_processes(driver: int) -> list[int]:
    """PIDs of the GCS server and raylet of the local Ray cluster that ``driver`` started (its descendants)."""
    parents = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, driver):
            ancestor = parents.get(ancestor)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                program = os.path.basename(fh.read().split(b"\0")[0]).decode()
        except OSError:
            continue
        if ancestor == driver and program in ("gcs_server", "raylet"):
            found.append(pid)
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the cluster's processes through /proc")
def test_a_local_cluster_that_dies_mid_build_ends_it_in_one_line(tmp_path):
    """Killing the GCS and the raylet ended the driver 60 s later with Ray's own RPC error (a suite once hung > 10 min
    in a Ray test); the build resumes with the local engine."""
    args = [sys.executable, "-m", "corruptgen", *KILLED_ARGS[:3], "solarize,posterize", *KILLED_ARGS[4:],
            "--out", str(tmp_path / "ray")]  # fmt: skip
    env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1"}
    proc = subprocess.Popen(args, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "ray/syn2nat"
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None and not list(out.rglob("*.tar")):
            time.sleep(0.05)
        victims = _cluster_processes(proc.pid)
        assert len(victims) == 2, "the cluster's GCS server and raylet were not found"
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        err = proc.communicate(timeout=120)[1]
        ended = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    dated = re.compile(r"\d{4}-\d\d-\d\d ")  # Ray's own log lines as it starts
    lines = [line for line in err.splitlines() if line.strip() and not dated.match(line)]
    assert proc.returncode == 2 and len(lines) == 1, err
    assert lines[0].startswith("corruptgen: error: the Ray cluster failed while the build ran (")
    assert ended < 40, f"the build ended {ended:.0f} s after its cluster"
    result = corruptgen.build("syn2nat", out=tmp_path / "ray", subsets="solarize,posterize", shard_size=1)
    assert result.manifest["complete"] and result.reused_shards > 0 and corruptgen.verify(out).ok


class _FakeRay:
    """Stands in for a running Ray cluster whose every chunk task ends with ``error`` (raised by ``ray.get``)."""

    def __init__(self, error: BaseException) -> None:
        self.error, self.cancelled = error, []

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr(ray, "is_initialized", lambda: True)
        monkeypatch.setattr(ray, "remote", lambda **kw: lambda fn: type("R", (), {"remote": staticmethod(id)}))
        monkeypatch.setattr(ray, "wait", lambda refs, **kw: (refs[:1], refs[1:]))
        monkeypatch.setattr(ray, "get", self.get)
        monkeypatch.setattr(ray, "cancel", lambda ref, force: self.cancelled.append(ref))

    def get(self, ref, timeout=None):
        raise self.error


@pytest.mark.parametrize(
    ("error", "line"),
    [(ray.exceptions.RayTaskError("f", "Traceback:\n  remote", CorruptgenError("cannot reach s3://b/x")).as_instanceof_cause(),
      "cannot reach s3://b/x"),
     (ray.exceptions.WorkerCrashedError(),
      "the Ray cluster failed while the build ran (WorkerCrashedError: The worker died unexpectedly")],
)  # fmt: skip
def test_a_ray_failure_ends_the_build_in_one_line(monkeypatch, error, line):
    fake = _FakeRay(error)
    fake.install(monkeypatch)
    tasks = [ChunkTask(plan=None, out_dir="o", chunk=c, start=c, stop=c + 1, subsets=("a",)) for c in range(3)]
    with pytest.raises(CorruptgenError) as caught:
        list(run_tasks(tasks, engine="ray"))
    assert type(caught.value) is CorruptgenError and str(caught.value).startswith(line), str(caught.value)
    assert "\n" not in str(caught.value) and "Traceback" not in str(caught.value)
    assert len(fake.cancelled) == 2  # the chunks still pending
