"""Local worker processes that die or are interrupted: a worker killed by SIGKILL (what the OOM killer sends) is
replaced and its chunks rendered again, a bounded number of times; Ctrl-C stops running chunks within seconds,
discards their partial shards and keeps every finished one."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import worker_faults

import corruptgen
from corruptgen.engine import executors
from corruptgen.errors import CorruptgenError

KW = dict(subsets="posterize", limit=3, shard_size=1, card=False)


def tar_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("reference")
    corruptgen.build("syn2nat", out=out, **KW)
    return tar_bytes(out / "syn2nat")


def test_a_killed_worker_is_replaced_then_a_chunk_that_keeps_killing_it_fails_in_one_line(
    tmp_path, monkeypatch, capsys, reference
):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kill-once-1").touch()  # chunk 1's first worker is killed, its second one renders it
    (out / "kill-always-2").touch()  # chunk 2 kills every worker it gets
    monkeypatch.setattr(executors, "render_chunk", worker_faults.die)
    monkeypatch.setattr(executors, "WORKER_RETRIES", 1)
    with pytest.raises(CorruptgenError) as caught:
        corruptgen.build("syn2nat", out=out, workers=2, **KW)
    message, err = str(caught.value), capsys.readouterr().err
    assert not (out / "kill-once-1").exists(), "chunk 1's worker was never killed"
    assert "worker process died (killed by SIGKILL" in err and "rendering chunk 1" in err and "retry 1 of 1" in err
    assert "\n" not in message and "chunk 2 (killed by SIGKILL" in message and "2 times" in message, message
    assert "chunk 1" not in message, "chunk 1 rendered on its second worker"
    manifest = json.loads((out / "syn2nat/manifest.json").read_text())
    assert not manifest["complete"] and not list(out.rglob("*.partial"))
    assert sorted(manifest["shards"]) == [f"data/{s}/test-0000{c}.tar" for s in ("clean", "posterize") for c in (0, 1)]
    monkeypatch.undo()
    (out / "kill-always-2").unlink()
    result = corruptgen.build("syn2nat", out=out, **KW)  # the same command again, without the fault
    assert result.manifest["complete"] and (result.written_shards, result.reused_shards) == (2, 4)
    assert tar_bytes(out / "syn2nat") == reference


_DRIVER = """
import sys
sys.path.insert(0, sys.argv.pop(1))  # tests/: the spawned workers import worker_faults from there too
import worker_faults
from corruptgen.engine import executors
from corruptgen.cli import main
executors.render_chunk = worker_faults.crawl
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_stops_running_chunks_within_seconds_and_keeps_finished_ones(tmp_path, reference):
    out, root = tmp_path / "out", tmp_path / "out/syn2nat"
    args = ["build", "syn2nat", "--subsets", "posterize", "--limit", "3", "--shard-size", "1", "--workers", "2",
            "--no-card", "--no-progress", "--out", str(out)]  # fmt: skip
    here = str(Path(__file__).parent)
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, here, *args], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            manifest = root / "manifest.json"
            shards = json.loads(manifest.read_text())["shards"] if manifest.exists() else {}
            running = [root / f"data/posterize/.test-0000{c}.tar.partial" for c in (1, 2)]
            if "data/posterize/test-00000.tar" in shards and all(p.exists() for p in running):
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.stderr.read()
        assert all(p.exists() for p in running), "chunks 1 and 2 never ran together after chunk 0 finished"
        time.sleep(0.5)  # both chunks sleep inside their first input
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail("the build did not stop within 120 s of Ctrl-C")
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert elapsed < 15, f"Ctrl-C took {elapsed:.1f} s"
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert not list(root.rglob("*.partial")), "partial shards of the stopped chunks were left"
    manifest = json.loads((root / "manifest.json").read_text())
    assert not manifest["complete"] and "data/posterize/test-00000.tar" in manifest["shards"]
    kept = (root / "data/posterize/test-00000.tar").stat().st_mtime_ns
    result = corruptgen.build("syn2nat", out=out, **KW)
    assert result.reused_shards >= 2 and (root / "data/posterize/test-00000.tar").stat().st_mtime_ns == kept
    assert tar_bytes(root) == reference
