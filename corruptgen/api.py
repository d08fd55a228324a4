"""The Python API behind the CLI: ``build`` renders a benchmark into ``<out>/<benchmark>/`` (a path or fsspec URL)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .engine import BuildResult, render
from .errors import CorruptgenError
from .executors import RayOptions
from .family import get_benchmark
from .io.decode import DEFAULT_MAX_BYTES
from .io.storage import join
from .plan import Plan, SourceSpec


def make_plan(
    benchmark: str,
    *,
    source: str = "samples",
    subsets: str | Sequence[str] | None = None,
    clean: bool = True,
    limit: int | None = None,
    image_column: str | None = None,
    label_column: str | None = None,
    preprocess: str | None = None,
    **options,
) -> Plan:
    """The plan ``build`` would execute; ``options`` are :class:`~corruptgen.plan.Plan` fields or the family's own."""
    spec = SourceSpec(spec=source, image_column=image_column, label_column=label_column, limit=limit)
    return get_benchmark(benchmark).plan(source=spec, subsets=subsets, clean=clean, preprocess=preprocess, **options)


def build(
    benchmark: str = "syn2nat",
    *,
    source: str = "samples",
    out: str | os.PathLike = "corruptgen-out",
    subsets: str | Sequence[str] | None = None,
    clean: bool = True,
    limit: int | None = None,
    workers: int = 1,
    seed: int = 0,
    image_format: str = "jpg",
    quality: int = 85,
    shard_size: int = 1000,
    split: str = "test",
    preprocess: str | None = None,
    image_column: str | None = None,
    label_column: str | None = None,
    max_pixels: int = 100_000_000,
    max_bytes: int = DEFAULT_MAX_BYTES,
    strict: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    device: str = "cpu",
    batch_size: int = 64,
    io_threads: int | None = None,
    engine: str = "local",
    ray: RayOptions | None = None,
    **family_options,
) -> BuildResult:
    """Render ``benchmark`` from ``source`` into ``<out>/<benchmark>/`` and return what was done.

    Example:
        >>> import corruptgen
        >>> result = corruptgen.build("syn2nat", subsets="solarize,posterize", out="/tmp/cg")  # doctest: +SKIP
        >>> result.manifest["counts"]["samples"]  # doctest: +SKIP

    Inputs whose file exceeds ``max_bytes`` or whose declared pixel count exceeds ``max_pixels`` are skipped with
    their reason. With ``strict=True`` any skipped input or failed sample raises :class:`CorruptgenError` after the
    build.
    ``family_options`` are the benchmark family's own choices (e.g. ``severities`` for ImageNet-C).
    ``workers``, ``device``, ``batch_size``, ``io_threads`` (decode/encode threads overlapping the corruptions; default
    0 on CPU, 8 with CUDA) and ``engine`` (``local`` or ``ray``, with :class:`RayOptions`) change speed only, never
    the bytes.
    """
    plan = make_plan(
        benchmark,
        source=source,
        subsets=subsets,
        clean=clean,
        limit=limit,
        image_column=image_column,
        label_column=label_column,
        preprocess=preprocess,
        seed=seed,
        image_format=image_format,
        quality=quality,
        shard_size=shard_size,
        split=split,
        max_pixels=max_pixels,
        max_bytes=max_bytes,
        **family_options,
    )
    result = render(plan, join(out, benchmark), workers=workers, progress=progress, overwrite=overwrite,
                    device=device, batch_size=batch_size, io_threads=io_threads, engine=engine, ray=ray)  # fmt: skip
    counts = result.manifest["counts"]
    if strict and (counts["skipped_inputs"] or counts["failed_samples"]):
        raise CorruptgenError(f"--strict: {result.summary()}")
    return result
