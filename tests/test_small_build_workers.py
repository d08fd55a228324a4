"""A build with fewer chunks than workers shares each chunk's subsets out over tasks: every worker renders, and the
shards, their bytes and the manifest are those of one worker."""

from __future__ import annotations

import json
from typing import ClassVar

import numpy as np
from PIL import Image

import corruptgen
import corruptgen.engine.executors
from corruptgen.engine.chunk import ChunkTask
from corruptgen.engine.run import _share_out
from corruptgen.engine.worker_pool import WorkerPool

SUBSETS = "fog_s3,contrast_s2,pixelate_s1"


def _inputs(folder):
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name in ("a", "b"):
        Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(folder / f"{name}.png")
    (folder / "c.jpg").write_bytes(b"not an image")  # skipped by every task of its chunk, listed once
    return f"imagefolder:{folder}"


def test_share_out_splits_subsets_round_robin_only_when_workers_would_idle():
    task = ChunkTask(plan=None, out_dir="o", chunk=0, start=0, stop=3, subsets=("a", "b", "c", "d", "e"))
    assert _share_out([task], 1) == [task]
    parts = _share_out([task], 2)
    assert [p.subsets for p in parts] == [("a", "c", "e"), ("b", "d")]
    assert [p.name for p in parts] == ["chunk 0 (part 1 of 2)", "chunk 0 (part 2 of 2)"]
    assert _share_out([task, task], 2) == [task, task]
    assert [p.subsets for p in _share_out([task], 8)] == [("a",), ("b",), ("c",), ("d",), ("e",)]


class _Recording(WorkerPool):
    used: ClassVar[set[int]] = set()

    def _assign(self, fn, todo) -> None:
        super()._assign(fn, todo)
        _Recording.used |= {w.process.pid for w in self.workers if w.task is not None}


def test_two_workers_render_a_3_input_build_with_the_bytes_of_one(tmp_path, monkeypatch):
    source = _inputs(tmp_path / "in")
    one = corruptgen.build("cifar10-c", source=source, subsets=SUBSETS, out=tmp_path / "w1", card=False)
    monkeypatch.setattr(corruptgen.engine.executors, "WorkerPool", _Recording)
    two = corruptgen.build("cifar10-c", source=source, subsets=SUBSETS, out=tmp_path / "w2", card=False, workers=2)
    assert len(_Recording.used) == 2
    assert one.manifest["counts"] == two.manifest["counts"] and one.manifest["counts"]["skipped_inputs"] == 1
    assert len(two.manifest["skipped"]) == 1
    first, second = (json.loads((tmp_path / w / "cifar10-c/manifest.json").read_text()) for w in ("w1", "w2"))
    assert first == second  # shard records (checksums, facts, fingerprints), skipped list, plan, invocation
    for rel in one.manifest["shards"]:
        assert (tmp_path / "w1/cifar10-c" / rel).read_bytes() == (tmp_path / "w2/cifar10-c" / rel).read_bytes()
