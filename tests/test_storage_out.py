"""Builds to fsspec URLs: same bytes as a local build, single-put commits, resume by sha256, clean errors."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path

import fsspec
import pytest

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.io import storage

KW = dict(subsets="solarize,posterize", shard_size=4)  # 3 subsets (with clean) x 3 chunks of the 10 samples


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    result = corruptgen.build("syn2nat", out=out, **KW)
    return result.manifest, out / "syn2nat"


@pytest.fixture
def mem():
    """A fresh memory:// root (the memory filesystem is shared by the whole process)."""
    root = f"memory://cg-{uuid.uuid4().hex}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root.removeprefix("memory:/")):
        fs.rm(root.removeprefix("memory:/"), recursive=True)


@pytest.fixture
def tmpdir_temp(tmp_path, monkeypatch):
    """Local temporary shard files go to a directory of their own, so leftovers can be counted."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def remote_manifest(url: str) -> dict:
    fs, path = fsspec.core.url_to_fs(url)
    return json.loads(fs.cat_file(f"{path}/manifest.json"))


def test_memory_build_equals_local_build(local_build, mem, tmpdir_temp):
    manifest, root = local_build
    result = corruptgen.build("syn2nat", out=mem, **KW)
    url = f"{mem}/syn2nat"
    assert result.out_dir == url and result.written_shards == 9 and url in result.summary()
    assert remote_manifest(url)["shards"] == manifest["shards"]
    fs, path = fsspec.core.url_to_fs(url)
    assert fs.cat_file(f"{path}/manifest.json") == (root / "manifest.json").read_bytes()
    for rel in manifest["shards"]:
        assert fs.cat_file(f"{path}/{rel}") == (root / rel).read_bytes(), rel
    assert sorted(storage.location(url).find("", ".tar")) == sorted(manifest["shards"])
    assert not list(tmpdir_temp.iterdir())  # every local temporary file was removed after its upload
    report = corruptgen.verify(url)
    assert report.ok and report.checked == 9
    assert corruptgen.load_manifest(url)["complete"]


def test_file_url_build_equals_local_build(local_build, tmp_path):
    manifest, root = local_build
    result = corruptgen.build("syn2nat", out=f"file://{tmp_path}/f", **KW)
    assert result.out_dir == tmp_path / "f/syn2nat"  # file:// is the local path, with .partial + rename commits
    built = json.loads((tmp_path / "f/syn2nat/manifest.json").read_text())
    assert built["shards"] == manifest["shards"]
    for rel in manifest["shards"]:
        assert (tmp_path / "f/syn2nat" / rel).read_bytes() == (root / rel).read_bytes()


def test_remote_resume_rebuilds_only_missing_and_damaged_shards(local_build, mem):
    manifest, root = local_build
    corruptgen.build("syn2nat", out=mem, **KW)
    url = f"{mem}/syn2nat"
    fs, path = fsspec.core.url_to_fs(url)
    fs.rm(f"{path}/data/solarize/test-00001.tar")
    result = corruptgen.build("syn2nat", out=mem, **KW)
    assert (result.written_shards, result.reused_shards) == (1, 8)
    assert fs.cat_file(f"{path}/data/solarize/test-00001.tar") == (root / "data/solarize/test-00001.tar").read_bytes()

    damaged = bytearray(fs.cat_file(f"{path}/data/posterize/test-00002.tar"))
    damaged[1000] ^= 0xFF  # same size, different content: only the streamed sha256 notices
    fs.pipe_file(f"{path}/data/posterize/test-00002.tar", bytes(damaged))
    assert corruptgen.verify(url).mismatched == ["data/posterize/test-00002.tar"]
    result = corruptgen.build("syn2nat", out=mem, **KW)
    assert (result.written_shards, result.reused_shards) == (1, 8)
    assert remote_manifest(url)["shards"] == manifest["shards"]
    assert corruptgen.verify(url).ok


def test_remote_overwrite_replaces_data(mem):
    corruptgen.build("syn2nat", out=mem, **KW)
    with pytest.raises(CorruptgenError, match="different build"):
        corruptgen.build("syn2nat", out=mem, subsets="solarize", shard_size=5)
    result = corruptgen.build("syn2nat", out=mem, subsets="solarize", shard_size=5, overwrite=True)
    assert result.written_shards == 4 and corruptgen.verify(f"{mem}/syn2nat").unexpected == []


def test_failed_upload_leaves_no_object_and_no_temp_file(mem, tmpdir_temp, monkeypatch):
    put_file = storage.Location.put_file

    def fail(self, local, rel):
        if rel.endswith(".tar"):  # shards fail, the manifest is written
            raise OSError("upload refused")
        put_file(self, local, rel)

    monkeypatch.setattr(storage.Location, "put_file", fail)
    with pytest.raises(OSError, match="upload refused"):
        corruptgen.build("syn2nat", out=mem, **KW)
    monkeypatch.undo()
    assert not list(tmpdir_temp.iterdir())
    assert storage.location(f"{mem}/syn2nat").find("", ".tar") == []
    assert not corruptgen.load_manifest(f"{mem}/syn2nat")["complete"]


def test_workers_upload_their_own_shards(local_build, tmp_path):
    """A non-local filesystem shared between processes: spawn workers upload, the driver writes the manifest."""
    manifest, _ = local_build
    url = f"simplecache::file://{tmp_path}/sc"
    result = corruptgen.build("syn2nat", out=url, workers=2, **KW)
    assert result.out_dir == f"{url}/syn2nat" and result.written_shards == 9
    assert json.loads((tmp_path / "sc/syn2nat/manifest.json").read_text())["shards"] == manifest["shards"]
    assert not list((tmp_path / "sc/syn2nat").rglob("*.partial"))


def test_memory_needs_one_local_worker(mem):
    with pytest.raises(CorruptgenError, match="only inside this process"):
        corruptgen.build("syn2nat", out=mem, workers=2, **KW)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("nosuchproto://bucket/x", "unknown filesystem protocol"),
        ("s3://bucket/x", "install s3fs: pip install 'corruptgen[s3]'"),
        ("gs://bucket/x", "install gcsfs: pip install 'corruptgen[gcs]'"),
    ],
)
def test_unusable_protocol_is_one_line_exit_2(out, message, capsys):
    if message.startswith("install") and storage.local_path(out) is None:
        try:
            storage._filesystem(out)  # the filesystem only: opening a Location would contact the bucket
        except CorruptgenError:
            pass
        else:
            pytest.skip(f"the implementation for {out} is installed")
    assert main(["build", "syn2nat", "--subsets", "solarize", "--no-progress", "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_local_readers_refuse_urls_clearly(mem):
    with pytest.raises(CorruptgenError, match="reads a local build directory"):
        corruptgen.load(f"{mem}/syn2nat")


def test_coverage_reads_a_remote_build_like_a_local_one(mem, local_build):
    from corruptgen.quality.coverage import scan

    corruptgen.build("syn2nat", out=mem, **KW)
    local = {r.name: r.values.tolist() for r in scan(local_build[1])}
    remote = {r.name: r.values.tolist() for r in scan(f"{mem}/syn2nat")}
    assert remote == local and len(remote) == len(KW["subsets"].split(","))


def test_path_helpers():
    assert storage.local_path("out/x") == Path("out/x") and storage.local_path("file:///tmp/a") == Path("/tmp/a")
    assert storage.local_path("s3://b/x") is None and storage.local_path("simplecache::file:///tmp/a") is None
    assert storage.join("s3://b/x/", "syn2nat") == "s3://b/x/syn2nat"
    assert storage.join("out", "syn2nat") == Path("out/syn2nat")
    assert not storage.is_url(Path("s3:/b")) and not storage.is_url("C:\\data")


@pytest.mark.slow
def test_ray_tasks_upload_their_own_shards(local_build, tmp_path):
    pytest.importorskip("ray", reason="Ray is part of the test extra")
    manifest, _ = local_build
    url = f"simplecache::file://{tmp_path}/ray"
    result = corruptgen.build("syn2nat", out=url, engine="ray", ray=corruptgen.RayOptions(local_cpus=2), **KW)
    assert result.written_shards == 9 and corruptgen.verify(f"{url}/syn2nat").ok
    assert json.loads((tmp_path / "ray/syn2nat/manifest.json").read_text())["shards"] == manifest["shards"]
