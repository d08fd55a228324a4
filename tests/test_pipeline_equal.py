"""The pipelined schedule (decode ahead / encode behind on threads) writes the same bytes as the serial one."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import corruptgen
from corruptgen.engine.chunk import ChunkTask
from corruptgen.engine.options import RenderOptions
from corruptgen.engine.pipeline import render_chunk, render_pipelined


def _digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.tar")}


def _render(plan, out: Path, io_threads: int, batch_size: int = 64) -> tuple[dict[str, str], list]:
    task = ChunkTask(
        plan, str(out), 0, 0, 10, tuple(s.name for s in plan.subsets), RenderOptions("cpu", batch_size, io_threads)
    )
    result = render_chunk(task)
    return _digests(out), result["skipped"]


@pytest.mark.parametrize(
    ("benchmark", "options"),
    [
        ("syn2nat", {"subsets": "solarize,iso_noise,affines"}),
        ("opticsbench", {"subsets": "defocus_disk_s2,coma_s5"}),  # batched torch convolution
        ("imagenet-p", {"subsets": "gaussian_noise,translate", "size": 64}),  # sequences: many frames per sample
    ],
)
@pytest.mark.parametrize("io_threads", [1, 3])
def test_pipelined_bytes_equal_serial(tmp_path, benchmark, options, io_threads):
    plan = corruptgen.make_plan(benchmark, **options)
    serial, _ = _render(plan, tmp_path / "serial", 0, batch_size=4)
    piped, _ = _render(plan, tmp_path / "piped", io_threads, batch_size=4)
    assert len(serial) == len(plan.subsets) and piped == serial


def test_pipelined_counts_bad_inputs(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(5):
        Image.fromarray(rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)).save(folder / f"ok{i}.png")
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    (folder / "empty.png").write_bytes(b"")
    plan = corruptgen.make_plan("syn2nat", source=f"imagefolder:{folder}", subsets="solarize", preprocess="resize224")
    n = 7
    task = ChunkTask(
        plan, str(tmp_path / "a"), 0, 0, n, tuple(s.name for s in plan.subsets), RenderOptions("cpu", 64, 2)
    )
    piped = render_pipelined(task)
    serial = render_chunk(ChunkTask(plan, str(tmp_path / "b"), 0, 0, n, task.subsets, RenderOptions("cpu", 64, 0)))
    assert sorted(s["key"] for s in piped["skipped"]) == ["broken", "empty"]
    assert piped["skipped"] == serial["skipped"] and piped["shards"] == serial["shards"]


def test_build_with_io_threads_and_workers_equals_serial(tmp_path):
    from corruptgen.cli import main

    base = ["build", "syn2nat", "--subsets", "solarize,motion_blur", "--shard-size", "4", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--out", str(tmp_path / "b"), "--io-threads", "2", "--workers", "2"]) == 0
    a, b = _digests(tmp_path / "a/syn2nat"), _digests(tmp_path / "b/syn2nat")
    assert len(a) == 3 * 3 and a == b
    assert main([*base, "--out", str(tmp_path / "c"), "--io-threads", "-1"]) == 2
