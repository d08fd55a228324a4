"""Every source kind's fingerprint (:mod:`corruptgen.fingerprint`): a re-run over an unchanged source renders nothing
(the identities are stable from one scan to the next), and a re-run after one input changed renders it again and
equals a fresh build of the changed source."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import encode, small_photo

import corruptgen


def _npy(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    images = np.stack([small_photo(n, step=16)[:16, :16] for n in ("chelsea", "coffee", "rocket")])
    path = tmp_path / "images.npy"
    np.save(path, images)

    def change() -> None:
        changed = images.copy()
        changed[1] = 255 - changed[1]
        np.save(path, changed)

    return f"npy:{path}", change


def _webdataset(tmp_path: Path, request) -> tuple[str, Callable[[], None]]:
    root = request.getfixturevalue("wds_shards")

    def change() -> None:
        with tarfile.open(root / "clean-000.tar") as tar:
            members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
        with tarfile.open(root / "clean-000.tar", "w") as tar:
            for member, data in members:
                if member.name == "s0001.jpg":
                    data = encode(small_photo("astronaut", 8), "JPEG")
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
    root = request.getfixturevalue("wnid_tree")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.JPEG"))
    (root / "list.txt").write_text("\n".join(files) + "\n")

    def change() -> None:
        Path(root / files[1]).write_bytes(encode(small_photo("rocket", 8), "JPEG"))

    return f"filelist:{root / 'list.txt'}", change


KINDS = {"npy": _npy, "webdataset": _webdataset, "hf": _hf, "filelist": _filelist}


def _tars(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.tar"))}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_unchanged_sources_render_nothing_and_changed_inputs_render_again(kind, tmp_path, request):
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
