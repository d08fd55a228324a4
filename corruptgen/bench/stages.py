"""Per-stage measurements of each family on the same inputs, and the baselines of issues A–E beside them.

Stages (``images`` = what the stage produced, ``images_per_s`` = images / seconds):

* ``decode``: read + decode + preprocess each input (the engine's :func:`~corruptgen.chunk.load_image`);
* ``corrupt``: every subset's corruption on every decoded input, as the engine runs it (batched forms in batches of
  ``batch_size`` on ``device``; VCR includes its Δv search);
* ``vif`` (VCR only): the VIF evaluations of the search, batched: one :class:`~corruptgen.quality.VIFReference` per
  clean image against its corrupted outputs (both as stored), ``batch_size`` candidates per call;
* ``encode``: the build's image encoding (JPEG q85 by default);
* ``write``: the sample metadata and the tar shard writing (:class:`~corruptgen.io.shards.ShardWriter`, fsync and
  hash included) into a temporary directory;
* ``end_to_end``: a real :func:`corruptgen.build` of the family on the same inputs into a temporary directory
  (clean subset included; ``samples_per_s`` counts every sample, ``corrupted_per_s`` the corrupted ones).

Ratios are ours ÷ baseline in images per second: above 1 ours is faster.
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError

#: Families ``corruptgen bench`` knows, in the order they run; ``eval`` is issue E (model evaluation).
FAMILIES = ("syn2nat", "imagenet-c", "vcr", "opticsbench", "eval")
#: Seconds a single-image baseline is timed per group (per subset, or for all VIF pairs) once it has one image.
BASELINE_BUDGET_S = {"imagenet-c": 0.15, "vcr": 3.0, "opticsbench": 0.3}
#: At most this many inputs keep their outputs for the VIF stage (memory stays bounded with a large ``--images``).
VIF_MAX_INPUTS = 32


@dataclass(frozen=True)
class Settings:
    device: str = "cpu"
    batch_size: int = 64
    repeats: int = 1
    quality: int = 85
    model: str = "efficientnet_lite0"
    io_threads: int | None = None  # end-to-end build schedule (None: the engine's default for the device)


def _sync(device: str) -> Callable[[], None]:
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


class Clock:
    """Accumulates seconds of timed blocks (``with clock:``), synchronising CUDA around each on a GPU device."""

    def __init__(self, device: str = "cpu") -> None:
        self.sync = _sync(device)
        self.seconds = 0.0
        self._t0 = 0.0

    def __enter__(self) -> Clock:
        self.sync()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.sync()
        self.seconds += time.perf_counter() - self._t0


def measurement(images: int, seconds: float, **extra: Any) -> dict[str, Any]:
    ips = images / seconds if seconds > 0 else None
    return {"images": int(images), "seconds": round(seconds, 6), "images_per_s": ips, **extra}


def _median_runs(runs: list[dict[str, tuple[int, float]]]) -> dict[str, dict[str, Any]]:
    """Per stage: the images of the first run and the median seconds over the runs."""
    return {name: measurement(runs[0][name][0], statistics.median(r[name][1] for r in runs)) for name in runs[0]}


def ratio(ours: dict | None, base: dict | None) -> float | None:
    if not ours or not base or not ours.get("images_per_s") or not base.get("images_per_s"):
        return None
    return ours["images_per_s"] / base["images_per_s"]


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


def _corrupt_subset(plan, subset, images, keys, settings: Settings, clock: Clock) -> list[tuple[str, int, Any, Any]]:
    """(key, input index, output, params) of one subset over every input, timed into ``clock`` (as the engine)."""
    from ..chunk import batch_kwargs, sample_kwargs
    from ..corruptions import get
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
            with clock:
                batch = np.stack([images[i] for _, i, *_ in part])
                results, params = corruption.batch_fn(batch, rngs, device=settings.device, **options, **extra)
            out.extend((key, i, r, p) for (key, i, *_), r, p in zip(part, results, params, strict=True))
        return out
    for key, i, item_key, repeat in jobs:
        _, rng = sample_rng(plan.seed, plan.benchmark, subset.name, key)
        extra = sample_kwargs(corruption, plan, subset, item_key, i, repeat)
        with clock:
            result, params = corruption.apply(images[i], rng, **options, **extra)
        out.append((key, i, result, params))
    return out


def run_stages(
    plan, inputs: Inputs, settings: Settings, workdir: Path, *, keep_vif: bool = False, limit: int | None = None
) -> dict[str, Any]:
    """One pass of decode → corrupt → encode → write over every input (the first ``limit``) and subset; returns
    per-stage ``(images, seconds)``, the decoded images and keys, and (``keep_vif``) the outputs of the first inputs."""
    from ..chunk import load_image
    from ..io.codec import dump_json, encode_image
    from ..io.decode import BadImageError
    from ..io.layout import shard_relpath
    from ..io.shards import ShardWriter
    from ..io.sources import open_source

    source = open_source(inputs.spec)
    items = source.items()[:limit]
    decode = Clock()
    images, keys = [], []
    for index, item in enumerate(items):
        try:
            with decode:
                image = load_image(source, index, plan)
        except BadImageError:
            continue
        images.append(image)
        keys.append(item.key)
    if not images:
        raise CorruptgenError(f"none of the {len(items)} inputs could be decoded")
    corrupt, encode, write = Clock(settings.device), Clock(), Clock()
    produced = 0
    kept: dict[int, list[np.ndarray]] = {}
    out_dir = Path(tempfile.mkdtemp(prefix="stages-", dir=workdir))
    for subset in plan.subsets:
        if subset.corruption is None:
            continue
        results = _corrupt_subset(plan, subset, images, keys, settings, corrupt)
        writer = ShardWriter(out_dir / shard_relpath(subset.name, 0, plan.split))
        for key, i, image, params in results:
            with encode:
                data = encode_image(image, plan.image_format, plan.quality)
            with write:
                meta = {"benchmark": plan.benchmark, "key": key, "source_key": keys[i], "subset": subset.name,
                        "corruption": subset.corruption, "severity": subset.severity, "params": params}  # fmt: skip
                writer.add(key, {"json": dump_json(meta), plan.image_format: data})
            if keep_vif and i < VIF_MAX_INPUTS:
                kept.setdefault(i, []).append(image)
        with write:
            writer.commit()
        produced += len(results)
    return {
        "stages": {
            "decode": (len(images), decode.seconds),
            "corrupt": (produced, corrupt.seconds),
            "encode": (produced, encode.seconds),
            "write": (produced, write.seconds),
        },
        "images": images,
        "keys": keys,
        "kept": kept,
    }


def end_to_end(family: str, inputs: Inputs, settings: Settings, out: Path) -> dict[str, Any]:
    """A real :func:`corruptgen.build` of ``family`` on the inputs into ``out`` (removed first)."""
    import shutil

    from ..api import build

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    result = build(family, source=inputs.spec, out=out, device=settings.device,
                              batch_size=settings.batch_size, quality=settings.quality,
                              io_threads=settings.io_threads)  # fmt: skip
    seconds = time.perf_counter() - t0
    counts = result.manifest["counts"]
    clean = sum(counts["per_subset"].get(s, 0) for s in ("clean",))
    samples = counts["samples"]
    return {**measurement(samples, seconds), "samples": samples, "samples_per_s": samples / seconds,
            "corrupted": samples - clean, "corrupted_per_s": (samples - clean) / seconds,
            "inputs": counts["inputs"], "build_dir": str(result.out_dir)}  # fmt: skip


def _budgeted(calls: list[Callable[[], Any]], budget_s: float) -> tuple[int, float, list[Any]]:
    """Run ``calls`` in order until ``budget_s`` is spent (at least one): (calls made, seconds, results)."""
    done, seconds, results = 0, 0.0, []
    for call in calls:
        t0 = time.perf_counter()
        results.append(call())
        seconds += time.perf_counter() - t0
        done += 1
        if seconds >= budget_s:
            break
    return done, seconds, results


# ------------------------------------------------------------------------------------------------ families
