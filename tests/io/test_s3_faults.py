"""Object stores that fail a build midway, on moto's S3 server (behind a proxy that can stop answering or die): the
lock object is released on SIGTERM and taken over when its holder is provably gone, every request is bounded (short
limits set through the environment here), and no staging file outlives its process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from s3_proxy import FaultyProxy
from test_s3_server import BUCKET, _fresh_clients, aws, endpoint  # noqa: F401 (fixtures)

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.io import lock, storage
from corruptgen.io.liveness import host_tag, process_gone

BUILD = ["build", "syn2nat", "--subsets", "solarize", "--limit", "3", "--shard-size", "1", "--no-progress",
         "--no-card"]  # fmt: skip
_CHILD = """
import sys, time
from corruptgen.io import storage

put_file = storage.Location.put_file


def put_then_wait(self, local, rel):
    put_file(self, local, rel)
    if rel.endswith(".tar"):
        print("uploaded", flush=True)
        time.sleep(60)  # a staging file of this chunk is still open


storage.Location.put_file = put_then_wait
from corruptgen.cli import main

sys.exit(main(sys.argv[1:]))
"""


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _lock_of(url: str) -> storage.Location:
    return storage.location(f"{url}/syn2nat")


def test_sigterm_releases_the_lock_and_the_staging_files(aws, tmp_path):  # noqa: F811
    """How batch schedulers preempt a job: the retry must not need --force-unlock."""
    url = f"s3://{BUCKET}/sigterm"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, *BUILD, "--out", url], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert child.stdout.readline().strip() == "uploaded"
        assert _lock_of(url).exists(lock.LOCK_NAME) and list(tmp_path.iterdir())
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
    finally:
        child.kill()
    stderr = child.stderr.read()
    assert child.returncode == -signal.SIGTERM and "terminated (SIGTERM)" in stderr, stderr
    assert not _lock_of(url).exists(lock.LOCK_NAME) and not list(tmp_path.iterdir())
    result = corruptgen.build("syn2nat", out=url, subsets="solarize", limit=3, shard_size=1, card=False)
    assert result.written_shards == 6 and corruptgen.verify(result.out_dir).ok  # the retry needs no --force-unlock


def test_a_lock_whose_holder_is_gone_is_taken_over(aws, capsys):  # noqa: F811
    url = f"s3://{BUCKET}/takeover"
    gone = {**lock.holder_record(), "pid": _dead_pid()}
    _lock_of(url).put_bytes(lock.LOCK_NAME, json.dumps(gone).encode())
    corruptgen.build("syn2nat", out=url, subsets="solarize", limit=1, card=False, progress=False)
    err = capsys.readouterr().err
    assert f"took over the lock of {url}/syn2nat: its holder (pid {gone['pid']} on" in err
    assert not _lock_of(url).exists(lock.LOCK_NAME)
    for alive in ({**gone, "pid": os.getppid()}, {**gone, "host": "another-host"}):  # running, or not provably gone
        _lock_of(url).put_bytes(lock.LOCK_NAME, json.dumps(alive).encode())
        with pytest.raises(CorruptgenError, match="is locked by another build"):
            corruptgen.build("syn2nat", out=url, subsets="solarize", limit=1, card=False, progress=False)
    _lock_of(url).fs.rm(_lock_of(url).path(lock.LOCK_NAME))


def _break_after_first_shard(monkeypatch, endpoint_url: str, breaks) -> None:
    proxy = FaultyProxy(int(endpoint_url.rsplit(":", 1)[1]))
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{proxy.port}")
    _fresh_clients()
    put_file = storage.Location.put_file

    def put_then_break(self, local, rel):
        put_file(self, local, rel)
        if rel.endswith(".tar"):
            breaks(proxy)

    monkeypatch.setattr(storage.Location, "put_file", put_then_break)


class _Hung(Exception):
    pass


def _raise_hung(signum, frame):
    raise _Hung("the build still runs after 60 s")


def _fails_in_one_line(capsys, out: str, *more: str) -> tuple[str, float]:
    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _raise_hung)  # a hanging build fails the test instead of hanging it
    signal.alarm(60)
    try:
        assert main([*BUILD, *more, "--out", out]) == 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"corruptgen: error: cannot reach {out}/syn2nat"), err
    return err, time.monotonic() - start


def test_a_server_that_stops_answering_fails_in_one_line(aws, endpoint, monkeypatch, capsys, tmp_path):  # noqa: F811
    """It hung for good (> 240 s); here with 1 s per request and 2 attempts."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv(storage.TIMEOUT_ENV, "1")
    monkeypatch.setenv(storage.ATTEMPTS_ENV, "2")
    put_file = storage.Location.put_file
    _break_after_first_shard(monkeypatch, endpoint, FaultyProxy.hang)
    _, elapsed = _fails_in_one_line(capsys, f"s3://{BUCKET}/hang")
    assert elapsed < 15 and not list(tmp_path.iterdir())
    monkeypatch.setattr(storage.Location, "put_file", put_file)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)  # answering again: the lock the failed build kept is taken over
    _fresh_clients()
    assert main([*BUILD, "--out", f"s3://{BUCKET}/hang"]) == 0
    assert f"took over the lock of s3://{BUCKET}/hang/syn2nat" in capsys.readouterr().err


def test_one_deadline_at_workers_2_when_the_server_stops_answering(aws, endpoint, monkeypatch, capsys, tmp_path):  # noqa: F811
    """At --workers 2 the build stopped 2 limits after the server did (a worker's upload, then the driver's manifest
    write, in turn: 95 s at the default limits); here with 2 s per request and 2 attempts: one limit of 4 s and a few
    seconds to stop the workers, not two limits (at least 8 s)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the workers' staging files
    monkeypatch.setenv(storage.TIMEOUT_ENV, "2")
    monkeypatch.setenv(storage.ATTEMPTS_ENV, "2")
    proxy = FaultyProxy(int(endpoint.rsplit(":", 1)[1]))
    proxy.hang_on(b"/test-00001.tar")  # chunk 1's upload, in a worker process
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{proxy.port}")
    _fresh_clients()
    _fails_in_one_line(capsys, f"s3://{BUCKET}/hang-workers", "--workers", "2")
    assert proxy.hung_since is not None, "no shard upload was seen"
    elapsed = time.monotonic() - proxy.hung_since
    assert elapsed < 2 * 2 + 3.5, f"the build ended {elapsed:.1f} s after the server stopped answering"
    assert not list(tmp_path.iterdir())


def test_a_dead_server_fails_in_seconds(aws, endpoint, monkeypatch, capsys, tmp_path):  # noqa: F811
    """It took 73 s; the default limits apply here."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    _break_after_first_shard(monkeypatch, endpoint, FaultyProxy.die)
    _, elapsed = _fails_in_one_line(capsys, f"s3://{BUCKET}/dead")
    assert elapsed < 20 and not list(tmp_path.iterdir())


def test_request_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(storage.TIMEOUT_ENV, raising=False)
    monkeypatch.delenv(storage.ATTEMPTS_ENV, raising=False)
    assert storage.request_limits() == (storage.DEFAULT_TIMEOUT_S, storage.DEFAULT_ATTEMPTS)
    monkeypatch.setenv(storage.TIMEOUT_ENV, "soon")
    with pytest.raises(CorruptgenError, match="CORRUPTGEN_REMOTE_TIMEOUT must be a number of seconds"):
        storage.request_limits()


def test_only_staging_files_of_gone_processes_of_this_host_are_reaped(tmp_path):
    dead = _dead_pid()
    reused = subprocess.Popen(["sleep", "30"])  # a live pid that started after the file was last written
    try:
        names = {
            "gone": f".corruptgen-{host_tag()}-{dead}-a.tar.partial",
            "reused": f".corruptgen-{host_tag()}-{reused.pid}-b.tar.partial",
            "alive": f".corruptgen-{host_tag()}-{os.getpid()}-c.tar.partial",
            "other host": f".corruptgen-00000000-{dead}-d.tar.partial",
            "not ours": ".corruptgen-export.json",
        }
        for name in names.values():
            (tmp_path / name).write_bytes(b"x")
        old = time.time() - 3600
        os.utime(tmp_path / names["reused"], (old, old))
        assert storage.reap_staging(str(tmp_path)) == 2
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names["alive"], names["other host"],
                                                                     names["not ours"]])  # fmt: skip
    finally:
        reused.kill()
        reused.wait()
    assert process_gone(reused.pid) and not process_gone(os.getpid()) and not process_gone(0)
