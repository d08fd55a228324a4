"""Every source kind's fingerprint (:mod:`corruptgen.engine.fingerprint`): a re-run over an unchanged source renders
nothing (the identities are stable from one scan to the next), and a re-run after one input changed renders it again and
equals a fresh build of the changed source."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import corruptgen
from corruptgen.errors import CorruptgenError
from corruptgen.io.sources import open_source


def _npy(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    photo = request.getfixturevalue("photo")
    images = np.stack([photo(n, step=16)[:16, :16] for n in ("chelsea", "coffee", "rocket")])
    path = tmp_path / "images.npy"
    np.save(path, images)

    def change() -> None:
        changed = images.copy()
        changed[1] = 255 - changed[1]
        np.save(path, changed)

    return f"npy:{path}", change


def _webdataset(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    root, encode, photo = (request.getfixturevalue(name) for name in ("wds_shards", "encode", "photo"))

    def change() -> None:
        with tarfile.open(root / "clean-000.tar") as tar:
            members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
        with tarfile.open(root / "clean-000.tar", "w") as tar:
            for member, data in members:
                if member.name == "s0001.jpg":
                    data = encode(photo("astronaut", 8), "JPEG")
                    member.size = len(data)
                tar.addfile(member, io.BytesIO(data))

    return f"webdataset:{root}/clean-{{000..001}}.tar", change


def _hf(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    import datasets

    path = request.getfixturevalue("hf_disk")

    def change() -> None:  # the first row relabelled, saved again in place (datasets gives it a new fingerprint)
        dd = datasets.load_from_disk(str(path))
        edited = dd["test"].map(lambda row, i: {"label": 2 if i == 0 else row["label"]}, with_indices=True)
        datasets.DatasetDict(train=dd["train"], test=edited).save_to_disk(str(tmp_path / "hf_edited"))
        shutil.rmtree(path)
        shutil.move(tmp_path / "hf_edited", path)

    return f"hf:{path}:test", change


def _filelist(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    root, encode, photo = (request.getfixturevalue(name) for name in ("wnid_tree", "encode", "photo"))
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.JPEG"))
    (root / "list.txt").write_text("\n".join(files) + "\n")

    def change() -> None:
        Path(root / files[1]).write_bytes(encode(photo("rocket", 8), "JPEG"))

    return f"filelist:{root / 'list.txt'}", change


KINDS = {"npy": _npy, "webdataset": _webdataset, "hf": _hf, "filelist": _filelist}


def _tars(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_unchanged_sources_render_nothing_and_changed_inputs_render_again(kind, tmp_path, request, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the build records the source relative to here: verify --source finds it from here
    spec, change = KINDS[kind](tmp_path, request)
    kw = dict(subsets="posterize", shard_size=1, card=False)
    first = corruptgen.build("syn2nat", source=spec, out=tmp_path / "out", **kw)
    assert corruptgen.build("syn2nat", source=spec, out=tmp_path / "out", **kw).written_shards == 0
    change()
    again = corruptgen.build("syn2nat", source=spec, out=tmp_path / "out", **kw)
    assert 0 < again.written_shards <= first.written_shards
    fresh = corruptgen.build("syn2nat", source=spec, out=tmp_path / "fresh", **kw)
    assert _tars(tmp_path / "out/syn2nat") == _tars(tmp_path / "fresh/syn2nat")
    assert again.manifest["shards"] == fresh.manifest["shards"]
    assert corruptgen.verify(tmp_path / "out/syn2nat", source=True).ok


def test_no_source_kind_reads_a_build_directory(tmp_path, wds_shards, hf_parquet, encode, photo):
    build = wds_shards / "out/syn2nat"  # a build's folder: it holds the build lock (and images, shards)
    (build / "images").mkdir(parents=True)
    (build / ".corruptgen.lock").write_text("{}")
    (build / "images/grid.jpg").write_bytes(encode(photo("coffee", 8), "JPEG"))
    (wds_shards / "list.txt").write_text("clean-000.tar\nout/syn2nat/images/grid.jpg\n")
    listed = open_source(f"filelist:{wds_shards / 'list.txt'}")
    assert "inside the corruptgen build directory" in listed.problems[1]
    shutil.copy(wds_shards / "clean-000.tar", build / "copy.tar")
    with pytest.raises(CorruptgenError, match="only shards inside the corruptgen build directory"):
        open_source(f"webdataset:{wds_shards}/*/*/*.tar")  # only the build's tar matches
    shards = open_source(f"webdataset:{wds_shards}/{{clean-000,out/syn2nat/copy,clean-001}}.tar").shards
    assert shards == [str(wds_shards / "clean-000.tar"), str(wds_shards / "clean-001.tar")]
    shutil.copytree(build, hf_parquet / "out/syn2nat")
    with pytest.raises(CorruptgenError, match="holding the corruptgen build directory"):
        open_source(f"hf:{hf_parquet}")
