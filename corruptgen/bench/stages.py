"""Per-stage measurements of each family on the same inputs, and the baselines of issues A–E beside them.

Stages (``images`` = what the stage produced, ``images_per_s`` = images / seconds):

* ``decode``: read + decode + preprocess each input (the engine's :func:`~corruptgen.engine.chunk.load_image`);
* ``corrupt``: every subset's corruption on every decoded input, as the engine runs it (batched forms in batches of
  ``batch_size`` on ``device``; VCR includes its Δv search);
* ``vif`` (VCR only): the VIF evaluations of the search, batched: one :class:`~corruptgen.quality.VIFReference` per
  clean image against its corrupted outputs (both as stored), ``batch_size`` candidates per call;
* ``encode``: the build's image encoding (JPEG q85 by default);
* ``write``: the sample metadata and the tar shard writing (:class:`~corruptgen.io.shards.ShardWriter`, fsync and
  hash included) into a temporary directory;
* ``end_to_end``: a real ``corruptgen build`` of the family on the same inputs into a temporary directory, each run
  in a fresh process (interpreter start, imports and dataset card included, as a user runs it; clean subset included;
  ``samples_per_s`` counts every sample, ``corrupted_per_s`` the corrupted ones).

Ratios are ours ÷ baseline in images per second: above 1 ours is faster.
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.manifest import load_manifest
from ..errors import CorruptgenError
from .timing import THREAD_ENV, run_child, time_work

#: Families ``corruptgen bench`` knows, in the order they run; ``eval`` is issue E (model evaluation).
FAMILIES = ("syn2nat", "imagenet-c", "vcr", "opticsbench", "eval")
#: At most this many inputs keep their outputs for the VIF stage (memory stays bounded with a large ``--images``).
VIF_MAX_INPUTS = 32
#: At most this many corrupted outputs are kept for the encode and write stages (spread over the subsets).
KEEP_OUTPUTS = 512


@dataclass(frozen=True)
class Settings:
    device: str = "cpu"
    batch_size: int = 64
    repeats: int = 3  # timed runs per measurement (the median is reported)
    min_run_s: float = 0.5  # each timed run repeats its work until this many seconds passed
    quality: int = 85
    model: str = "efficientnet_lite0"
    io_threads: int | None = None  # end-to-end build schedule (None: the engine's default for the device)
    threads: int | None = 1  # torch/OpenCV threads of every measurement, the end-to-end builds' processes included


def _sync(device: str) -> Callable[[], None]:
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


def ratio(ours: dict | None, base: dict | None) -> float | None:
    """Ours ÷ baseline in wall-clock images/s."""
    if not ours or not base or not ours.get("images_per_s") or not base.get("images_per_s"):
        return None
    return ours["images_per_s"] / base["images_per_s"]


def cpu_ratio(ours: dict | None, base: dict | None) -> float | None:
    """Ours ÷ baseline in images per CPU-second (steadier than :func:`ratio` on a shared machine)."""
    if not ours or not base or not ours.get("cpu_s_per_image") or not base.get("cpu_s_per_image"):
        return None
    return base["cpu_s_per_image"] / ours["cpu_s_per_image"]


# ------------------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class Inputs:
    """``count`` input files (the source cycled) in ``folder``, opened as ``imagefolder:<folder>``."""

    folder: Path
    count: int
    source: str
    source_count: int

    @property
    def spec(self) -> str:
        return f"imagefolder:{self.folder}"

    @property
    def paths(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir() if p.is_file())


_EXT = {"JPEG": "jpg", "MPO": "jpg", "PNG": "png", "WEBP": "webp", "BMP": "bmp", "TIFF": "tif", "GIF": "gif"}


def materialize_inputs(source: str, images: int | None, folder: Path) -> Inputs:
    """Write the first ``images`` inputs of ``source`` (cycled when it has fewer; default: all of it, at most 10)
    as files in ``folder``, their bytes as the source serves them: every stage and the build read the same files."""
    from PIL import Image

    from ..io.decode import BadImageError
    from ..io.sources import open_source

    src = open_source(source)
    m = len(src)
    if m == 0:
        raise CorruptgenError(f"source {source!r} has no images")
    n = images if images is not None else min(m, 10)
    folder.mkdir(parents=True, exist_ok=True)
    cache: dict[int, tuple[bytes, str] | None] = {}
    written = 0
    for i in range(n):
        j = i % m
        if j not in cache:
            try:
                data = src.read(j)
                with Image.open(io.BytesIO(data)) as im:
                    ext = _EXT.get(im.format or "")
                if ext is None:  # an exotic container: store it losslessly as PNG
                    from ..io.decode import decode_image

                    arr, _ = decode_image(data)
                    buf = io.BytesIO()
                    Image.fromarray(arr).save(buf, format="PNG")
                    data, ext = buf.getvalue(), "png"
                cache[j] = (data, ext)
            except (BadImageError, OSError, ValueError):
                cache[j] = None
        if cache[j] is not None:
            data, ext = cache[j]
            (folder / f"img_{i:06d}.{ext}").write_bytes(data)
            written += 1
    if written == 0:
        raise CorruptgenError(f"source {source!r}: none of its first {min(n, m)} images could be read")
    return Inputs(folder=folder, count=written, source=source, source_count=m)


# ------------------------------------------------------------------------------------------------ stages


def family_plan(family: str, inputs: Inputs, settings: Settings):
    from ..api import make_plan

    return make_plan(family, source=inputs.spec, quality=settings.quality)


def _corrupt_subset(plan, subset, images, keys, settings: Settings) -> list[tuple[str, int, Any, Any]]:
    """(key, input index, output, params) of one subset over every input, as the engine runs it."""
    from ..corruptions import get
    from ..engine.chunk import batch_kwargs, sample_kwargs
    from ..seeding import sample_rng

    corruption = get(subset.corruption)
    options = dict(subset.options)
    jobs = [
        (key, i, item_key, r) for i, item_key in enumerate(keys) for r, key in enumerate(subset.sample_keys(item_key))
    ]
    out = []
    if corruption.batch_fn is not None:
        for start in range(0, len(jobs), settings.batch_size):
            part = jobs[start : start + settings.batch_size]
            rngs = [sample_rng(plan.seed, plan.benchmark, subset.name, key)[1] for key, *_ in part]
            extra = batch_kwargs(corruption, [i for _, i, *_ in part])
            batch = np.stack([images[i] for _, i, *_ in part])
            results, params = corruption.batch_fn(batch, rngs, device=settings.device, **options, **extra)
            out.extend((key, i, r, p) for (key, i, *_), r, p in zip(part, results, params, strict=True))
        return out
    for key, i, item_key, repeat in jobs:
        _, rng = sample_rng(plan.seed, plan.benchmark, subset.name, key)
        extra = sample_kwargs(corruption, plan, subset, item_key, i, repeat)
        result, params = corruption.apply(images[i], rng, **options, **extra)
        out.append((key, i, result, params))
    return out


def decode_inputs(plan, inputs: Inputs, limit: int | None = None) -> tuple[list[np.ndarray], list[str]]:
    """The decoded, preprocessed inputs (the first ``limit``) and their keys, as the engine loads them."""
    from ..engine.chunk import load_image
    from ..io.decode import BadImageError
    from ..io.sources import open_source

    source = open_source(inputs.spec)
    items = source.items()[:limit]
    images, keys = [], []
    for index, item in enumerate(items):
        try:
            images.append(load_image(source, index, plan))
        except BadImageError:
            continue
        keys.append(item.key)
    if not images:
        raise CorruptgenError(f"none of the {len(items)} inputs could be decoded")
    return images, keys


def run_stages(plan, inputs: Inputs, settings: Settings, workdir: Path, *, keep_vif: bool = False) -> dict[str, Any]:
    """Each stage timed on its own (:func:`~corruptgen.bench.timing.time_work`: warm-up, median of ``repeats``
    runs of at least ``min_run_s``): decode of every input, corrupt of every subset x input (one pass = one unit),
    encode and write of the outputs (at most ``KEEP_OUTPUTS`` of them). Returns the stage records, the decoded
    images and keys, and (``keep_vif``) the outputs of the first ``VIF_MAX_INPUTS`` inputs."""
    from ..io.codec import dump_json, encode_image
    from ..io.layout import shard_relpath
    from ..io.shards import ShardWriter

    timing = dict(runs=settings.repeats, min_seconds=settings.min_run_s)
    images, keys = decode_inputs(plan, inputs)
    stages = {"decode": time_work(lambda: len(decode_inputs(plan, inputs)[0]), **timing)}
    subsets = [s for s in plan.subsets if s.corruption]
    last: list[tuple[Any, list]] = []

    def corrupt_all() -> int:
        last[:] = [(s, _corrupt_subset(plan, s, images, keys, settings)) for s in subsets]
        return sum(len(results) for _, results in last)

    for subset in subsets:  # warm-up on one input: imports, transforms, caches, kernel stacks
        _corrupt_subset(plan, subset, images[:1], keys[:1], settings)
    stages["corrupt"] = time_work(corrupt_all, sync=_sync(settings.device), warmup=False, **timing)
    per_subset = max(1, KEEP_OUTPUTS // max(1, len(subsets)))
    outputs = [(s, key, i, image, params) for s, results in last for key, i, image, params in results[:per_subset]]
    kept: dict[int, list[np.ndarray]] = {}
    if keep_vif:
        for _, results in last:
            for _, i, image, _ in results:
                if i < VIF_MAX_INPUTS:
                    kept.setdefault(i, []).append(image)
    del last[:]
    stages["encode"] = time_work(
        lambda: len([encode_image(image, plan.image_format, plan.quality) for *_, image, _ in outputs]), **timing
    )
    encoded = [encode_image(image, plan.image_format, plan.quality) for *_, image, _ in outputs]
    out_dir = Path(tempfile.mkdtemp(prefix="stages-", dir=workdir))

    def write_all() -> int:
        writers: dict[str, Any] = {}
        for (subset, key, i, _, params), data in zip(outputs, encoded, strict=True):
            if subset.name not in writers:
                writers[subset.name] = ShardWriter(out_dir / shard_relpath(subset.name, 0, plan.split))
            meta = {"benchmark": plan.benchmark, "key": key, "source_key": keys[i], "subset": subset.name,
                    "corruption": subset.corruption, "severity": subset.severity, "params": params}  # fmt: skip
            writers[subset.name].add(key, {"json": dump_json(meta), plan.image_format: data})
        for writer in writers.values():
            writer.commit()
        return len(outputs)

    stages["write"] = time_work(write_all, **timing)
    return {"stages": stages, "images": images, "keys": keys, "kept": kept}


#: a fresh interpreter that runs ``corruptgen build`` (argv after the thread count) with that many OpenCV threads
_BUILD_CHILD = (
    "import sys, cv2; cv2.setNumThreads(int(sys.argv[1])); from corruptgen.cli import main; "
    "sys.exit(main(sys.argv[2:]))"
)


def end_to_end(family: str, inputs: Inputs, settings: Settings, out: Path) -> dict[str, Any]:
    """``corruptgen build`` of ``family`` on the inputs into ``out`` (removed before each), each run in a fresh
    process, as a user runs it: interpreter start, imports, rendering, manifest and card (a warm process would skip
    what every real build pays once). ``repeats`` runs; wall clock and CPU-seconds (user + system of the child,
    ``getrusage``) per sample, medians. The child uses ``threads`` OpenCV and torch threads."""
    threads = settings.threads or os.cpu_count() or 1
    argv = ["build", family, "--source", inputs.spec, "--out", str(out), "--device", settings.device,
            "--batch-size", str(settings.batch_size), "--quality", str(settings.quality), "--no-progress"]  # fmt: skip
    if settings.io_threads is not None:
        argv += ["--io-threads", str(settings.io_threads)]
    env = {**os.environ, **{name: str(threads) for name in THREAD_ENV}}
    runs = []
    for _ in range(max(1, settings.repeats)):
        shutil.rmtree(out, ignore_errors=True)
        child = run_child([sys.executable, "-c", _BUILD_CHILD, str(threads), *argv], env=env)
        if child.done.returncode != 0:
            raise CorruptgenError(f"end-to-end build of {family} failed: {child.done.stderr.strip()[-500:]}")
        runs.append((child.wall_s, child.cpu_s))
    manifest = load_manifest(out / family)
    counts, samples = manifest["counts"], manifest["counts"]["samples"]
    corrupted = samples - counts["per_subset"].get("clean", 0)
    rate = statistics.median(samples / wall for wall, _ in runs)
    return {"images": samples, "seconds": round(statistics.median(w for w, _ in runs), 6), "images_per_s": rate,
            "cpu_s_per_image": statistics.median(cpu / samples for _, cpu in runs), "runs": len(runs),
            "fresh_process": True, "samples": samples, "samples_per_s": rate, "corrupted": corrupted,
            "corrupted_per_s": rate * corrupted / samples, "inputs": counts["inputs"],
            "build_dir": str(out / family)}  # fmt: skip


# ------------------------------------------------------------------------------------------------ families
