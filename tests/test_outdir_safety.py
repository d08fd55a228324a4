"""The output directory of a build: one build at a time (lock), malformed manifests, deleting only what is ours,
``verify --strict`` and incremental builds (adding subsets reuses every existing shard untouched)."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import fsspec
import pytest

import corruptgen
from corruptgen.cli import main
from corruptgen.engine.reader import Build
from corruptgen.errors import CorruptgenError

LOCK_NAME = ".corruptgen.lock"  # the lock file / object inside <out>/<benchmark>/
ARGS = ["build", "syn2nat", "--subsets", "solarize", "--limit", "2", "--no-progress"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file below ``root``: (inode, mtime_ns, sha256)."""
    return {p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns,
                                             hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.fixture(scope="module")
def small_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("small")
    corruptgen.build("syn2nat", out=out, subsets="solarize", limit=2)
    return out


@pytest.fixture
def build_copy(small_build, tmp_path) -> Path:
    """A private copy of a finished 2-image build (``<tmp>/out``; the build is ``out/syn2nat``)."""
    shutil.copytree(small_build, tmp_path / "out")
    return tmp_path / "out"


# ------------------------------------------------------------------------------------------------ item 1: the lock
def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        assert proc.poll() is None, "the first build ended before it wrote its manifest"
        assert time.time() < deadline, f"{path} did not appear"
        time.sleep(0.02)


def test_second_build_into_a_locked_directory_exits_2_naming_the_holder(tmp_path, capsys):
    args = ["build", "syn2nat", "--subsets", "all", "--limit", "5", "--no-progress", "--out", str(tmp_path)]
    from corruptgen.engine.chunk import source_for

    assert cli(capsys, "list", "syn2nat")[0] == 0  # imports done here, so the second build reaches the lock at once
    source_for(corruptgen.make_plan("syn2nat", subsets="all", limit=5))
    first = subprocess.Popen([sys.executable, "-m", "corruptgen", *args], stderr=subprocess.PIPE, text=True)
    _wait_for(tmp_path / "syn2nat/manifest.json", first)  # written once the build holds the lock, before rendering
    code, _, err = cli(capsys, *args)
    assert first.poll() is None, "the first build must still be running for this check"
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "locked by another build" in err and f"pid {first.pid} on " in err and "syn2nat" in err
    assert first.wait(timeout=600) == 0, first.stderr.read()
    assert cli(capsys, "verify", str(tmp_path / "syn2nat"))[0] == 0
    assert json.loads((tmp_path / "syn2nat/manifest.json").read_text())["complete"]


_HOLDER = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, json.dumps({"pid": os.getpid(), "host": "testhost", "time": "now", "command": "holder"}).encode())
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hold(lock: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(lock), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_killed_holder_leaves_no_stale_lock_and_wait_lock_waits(tmp_path, capsys):
    root = tmp_path / "syn2nat"
    root.mkdir()
    holder = _hold(root / LOCK_NAME, 600)
    code, _, err = cli(capsys, *ARGS, "--out", str(tmp_path))
    assert code == 2 and f"pid {holder.pid} on testhost since now: holder" in err
    assert not (root / "manifest.json").exists()
    holder.send_signal(signal.SIGKILL)  # what the OOM killer does: the kernel drops the lock
    holder.wait()
    assert cli(capsys, *ARGS, "--out", str(tmp_path))[0] == 0
    holder = _hold(root / LOCK_NAME, 1.5)  # lets go after 1.5 s
    start = time.monotonic()
    code, out, err = cli(capsys, *ARGS, "--out", str(tmp_path), "--wait-lock", "120")
    assert code == 0 and "2 reused" in out and time.monotonic() - start >= 1.0, err
    holder.wait()


@pytest.fixture
def mem():
    root = f"memory://cg-{uuid.uuid4().hex}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root.removeprefix("memory:/")):
        fs.rm(root.removeprefix("memory:/"), recursive=True)


def test_remote_lock_object_names_its_holder_and_force_unlock_removes_it(mem, capsys):
    fs, path = fsspec.core.url_to_fs(f"{mem}/syn2nat/{LOCK_NAME}")
    stale = {"pid": 4242, "host": "gone-host", "time": "2026-01-01T00:00:00+00:00", "command": "corruptgen build"}
    fs.pipe_file(path, json.dumps(stale).encode())
    code, _, err = cli(capsys, *ARGS, "--out", mem)
    assert code == 2 and "pid 4242 on gone-host since 2026-01-01" in err and "--force-unlock" in err
    assert not fs.exists(path.rsplit("/", 1)[0] + "/manifest.json")
    code, _out, err = cli(capsys, *ARGS, "--out", mem, "--force-unlock")
    assert code == 0 and "removed the lock" in err and "pid 4242" in err
    assert not fs.exists(path), "a finished build removes its lock object"
    assert corruptgen.verify(f"{mem}/syn2nat").ok


# ------------------------------------------------------------------------------------------------ item 6: manifests
def _shard_as_string(m):
    m["shards"][next(iter(m["shards"]))] = "data/solarize/test-00000.tar"


def _drop_key(m):
    del next(iter(m["shards"].values()))["sha256"]


def _wrong_type(m):
    next(iter(m["shards"].values()))["samples"] = "2"


def _escaping_path(m):
    m["shards"]["data/solarize/../../../../victim.tar"] = m["shards"].pop("data/solarize/test-00000.tar")


BAD = {"shards_list": lambda m: m.update(shards=[]), "shard_record_string": _shard_as_string,
       "missing_sha256": _drop_key, "samples_string": _wrong_type, "path_escapes": _escaping_path,
       "skipped_not_list": lambda m: m.update(skipped={"a": 1}), "top_level_list": None}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_manifest_is_one_line_exit_2_and_nothing_changes(build_copy, case, capsys):
    root = build_copy / "syn2nat"
    manifest = json.loads((root / "manifest.json").read_text())
    if BAD[case] is None:
        manifest = [manifest]
    else:
        BAD[case](manifest)
    (root / "manifest.json").write_text(json.dumps(manifest))
    before = snapshot(build_copy)
    for argv in ([*ARGS, "--out", str(build_copy)], [*ARGS, "--out", str(build_copy), "--overwrite"],
                 ["verify", str(root)]):  # fmt: skip
        code, _out, err = cli(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, (argv, err)
        assert "not a valid corruptgen manifest" in err and "Traceback" not in err
        assert snapshot(build_copy) == before, f"{argv[0]} changed the directory"
    with pytest.raises(CorruptgenError, match="not a valid corruptgen manifest"):
        Build.open(root)


# ------------------------------------------------------------------------------------------------ item 7: deletion
def test_build_deletes_only_its_own_partial_files(build_copy, capsys):
    root = build_copy / "syn2nat"
    ours = [root / "data/solarize/.test-00000.tar.partial", root / ".manifest.json.partial"]
    theirs = [root / "notes/.draft.partial", root / "data/solarize/.mine.partial", root / "data/mine/results.csv",
              root / "data/solarize/.other-00000.tar.partial"]  # fmt: skip
    for path in ours + theirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    (root / "data/solarize/test-00000.tar").unlink()  # resume re-renders it
    assert cli(capsys, *ARGS, "--out", str(build_copy))[0] == 0
    assert not any(p.exists() for p in ours) and all(p.read_bytes() == b"x" for p in theirs)


def test_overwrite_deletes_only_recorded_shards_and_says_so(build_copy, capsys):
    root = build_copy / "syn2nat"
    mine = root / "data/mine/results.csv"
    mine.parent.mkdir(parents=True)
    mine.write_text("model,acc\n")
    (root / "data/solarize/notes.txt").write_text("mine too")
    code, _, err = cli(capsys, *ARGS, "--out", str(build_copy), "--subsets", "posterize")
    assert code == 2 and "different build" in err and "solarize" in err
    code, _, err = cli(capsys, *ARGS, "--out", str(build_copy), "--subsets", "posterize", "--overwrite")
    assert code == 0
    line = next(line for line in err.splitlines() if "--overwrite" in line)
    assert "deleting 1 shard (" in line and "data/solarize/test-00000.tar" in line
    assert "keeping 2 files corruptgen did not write (data/mine/results.csv, data/solarize/notes.txt)" in line
    assert mine.read_text() == "model,acc\n" and (root / "data/solarize/notes.txt").exists()
    assert not (root / "data/solarize/test-00000.tar").exists() and (root / "data/posterize/test-00000.tar").exists()
    assert cli(capsys, "verify", str(root))[0] == 0


def test_symlinked_data_folder_is_refused(build_copy, tmp_path, capsys):
    root = build_copy / "syn2nat"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(root / "data", elsewhere)
    (root / "data").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    for extra in ([], ["--overwrite", "--subsets", "posterize"]):
        code, _, err = cli(capsys, *ARGS, "--out", str(build_copy), *extra)
        assert code == 2 and "symbolic link" in err and len(err.strip().splitlines()) == 1
    assert snapshot(elsewhere) == before


def test_out_pointing_at_a_file_exits_2(tmp_path, capsys):
    (tmp_path / "file").write_text("not a folder")
    code, _, err = cli(capsys, *ARGS, "--out", str(tmp_path / "file"))
    assert code == 2 and "is not a directory" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "file").read_text() == "not a folder"


# ------------------------------------------------------------------------------------------------ item 8b: verify
def test_verify_reports_unlisted_tar_and_strict_fails(build_copy, capsys):
    root = build_copy / "syn2nat"
    shutil.copy(root / "data/clean/test-00000.tar", root / "data/solarize/test-00009.tar")
    code, out, _ = cli(capsys, "verify", str(root))
    assert code == 0 and "not in manifest: data/solarize/test-00009.tar" in out and "verify OK" in out
    code, out, _ = cli(capsys, "verify", "--strict", str(root))
    assert code == 1 and "not in manifest: data/solarize/test-00009.tar" in out and "verify FAILED" in out


# ------------------------------------------------------------------------------------------------ J2: incremental
def test_adding_subsets_reuses_every_shard_untouched(tmp_path, capsys):
    kw = dict(out=tmp_path, limit=3, shard_size=2)
    corruptgen.build("syn2nat", subsets="solarize,posterize", **kw)
    root = tmp_path / "syn2nat"
    before = snapshot(root / "data")
    first = json.loads((root / "manifest.json").read_text())
    result = corruptgen.build("syn2nat", subsets="solarize,posterize,iso_noise", **kw)
    assert (result.written_shards, result.reused_shards) == (2, 6)
    after = snapshot(root / "data")
    assert {rel: after[rel] for rel in before} == before  # same inode, mtime and bytes
    assert sorted(set(after) - set(before)) == ["iso_noise/test-00000.tar", "iso_noise/test-00001.tar"]
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["per_subset"]["iso_noise"] == 3
    assert manifest["settings_id"] == first["settings_id"]
    assert {n: s["id"] for n, s in first["subsets"].items()} == {
        n: s["id"] for n, s in manifest["subsets"].items() if n != "iso_noise"
    }
    assert corruptgen.make_plan("syn2nat", subsets="solarize,posterize,iso_noise", limit=3,
                                shard_size=2).plan_id == manifest["plan_id"]  # fmt: skip
    assert corruptgen.verify(root).ok
    fresh = corruptgen.build("syn2nat", out=tmp_path / "fresh", subsets="solarize,posterize,iso_noise", limit=3,
                             shard_size=2)  # fmt: skip
    assert fresh.manifest["shards"] == manifest["shards"]

    narrower = corruptgen.build("syn2nat", subsets="solarize", **kw)  # asks for subsets already built: keeps the rest
    assert (narrower.written_shards, narrower.reused_shards) == (0, 8) and narrower.manifest == manifest
    assert "nothing to render; its 2 other subsets (posterize, iso_noise) are kept" in capsys.readouterr().err
    with pytest.raises(CorruptgenError, match=r"other settings: --seed 1 \(built: 0\); use --overwrite"):
        corruptgen.build("syn2nat", subsets="solarize,posterize,iso_noise,affines", seed=1, **kw)
    with pytest.raises(CorruptgenError, match=r"does not ask for \(iso_noise, posterize\) while it adds affines"):
        corruptgen.build("syn2nat", subsets="solarize,affines", **kw)
    assert snapshot(root / "data") == after
    result = corruptgen.build("syn2nat", subsets="solarize", overwrite=True, **kw)
    assert (result.written_shards, result.reused_shards) == (0, 4)
    assert snapshot(root / "data") == {rel: v for rel, v in after.items() if rel.startswith(("clean/", "solarize/"))}
    assert "deleting 4 shards" in capsys.readouterr().err


def test_adding_a_subset_to_a_remote_build(mem):
    corruptgen.build("syn2nat", out=mem, subsets="solarize", limit=2)
    result = corruptgen.build("syn2nat", out=mem, subsets="solarize,posterize", limit=2)
    assert (result.written_shards, result.reused_shards) == (1, 2)
    assert corruptgen.verify(f"{mem}/syn2nat").ok


def test_more_severities_add_subsets(tmp_path):
    """Family options only choose subsets (each subset's record carries its severity): more severities add subsets."""
    kw = dict(out=tmp_path, subsets="gaussian_noise", limit=1)
    corruptgen.build("imagenet-c", severities="1", **kw)
    before = snapshot(tmp_path / "imagenet-c/data")
    result = corruptgen.build("imagenet-c", severities="1,3", **kw)
    assert (result.written_shards, result.reused_shards) == (1, 2)
    assert {rel: v for rel, v in snapshot(tmp_path / "imagenet-c/data").items() if rel in before} == before
    fresh = corruptgen.build("imagenet-c", severities="1,3", out=tmp_path / "fresh", subsets="gaussian_noise", limit=1)
    assert fresh.manifest["shards"] == result.manifest["shards"]
    fewer = corruptgen.build("imagenet-c", severities="1", **kw)  # built already: gaussian_noise_s3 is kept
    assert fewer.manifest["plan_id"] == result.manifest["plan_id"] and fewer.written_shards == 0


def test_symlinked_subset_folder_of_the_earlier_build_is_refused(build_copy, tmp_path, capsys):
    root = build_copy / "syn2nat"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(root / "data/solarize", elsewhere)
    (root / "data/solarize").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    code, _, err = cli(capsys, *ARGS, "--out", str(build_copy), "--subsets", "posterize", "--overwrite")
    assert code == 2 and "data/solarize is a symbolic link" in err
    assert snapshot(elsewhere) == before and (root / "data/solarize").is_symlink()
