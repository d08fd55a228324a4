"""The Python API behind the CLI: ``build`` renders a benchmark into ``<out>/<benchmark>/`` (a path or fsspec URL)."""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Sequence

from .engine.invocation import record
from .engine.options import RayOptions, RunOptions
from .engine.planning import SHARD_MAX, SHARD_MIN, SHARD_TARGET, default_shard_size, make_plan
from .engine.run import BuildResult, render
from .errors import CorruptgenError, NoSamplesError
from .family.benchmark import FAMILIES
from .io.decode import DEFAULT_MAX_BYTES
from .io.facts import flag_counts
from .io.storage import join
from .wording import counted

__all__ = ["SHARD_MAX", "SHARD_MIN", "SHARD_TARGET", "build", "default_shard_size", "make_plan"]


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
    image_format: str | None = None,
    quality: int = 85,
    shard_size: int | None = None,
    split: str = "test",
    preprocess: str | None = None,
    image_column: str | None = None,
    label_column: str | None = None,
    folder_labels: bool = False,
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
    card: bool = True,
    wait_lock: float = 0,
    force_unlock: bool = False,
    **family_options,
) -> BuildResult:
    """Render ``benchmark`` from ``source`` into ``<out>/<benchmark>/`` and return what was done (an alias such as
    ``imagenet_c`` stands for the family's name: ``<out>/imagenet-c/``).

    Example:
        >>> import corruptgen
        >>> result = corruptgen.build("syn2nat", subsets="solarize,posterize", out="/tmp/cg")  # doctest: +SKIP
        >>> result.manifest["counts"]["samples"]  # doctest: +SKIP

    ``shard_size`` defaults to :func:`default_shard_size` of the number of source images. With ``card=True`` (the
    default) the dataset card (``README.md``: one ``datasets`` config per subset, class names, counts, sizes) is
    written at the end of the build, so the directory loads with ``datasets.load_dataset``; the options a card was
    written with (e.g. by ``corruptgen card --license ...``) are kept. With ``card=False`` only the `datasets`
    configs are written (``.huggingface.yaml``), so ``load_dataset(DIR, name=<subset>)`` still loads one subset.
    ``folder_labels=True`` labels an ``imagefolder:``/``filelist:`` source's class folders by their sorted order
    (ImageNet wnids are not looked up; by default the layout rules of :mod:`corruptgen.io.sources` apply). Inputs
    whose file exceeds ``max_bytes`` or whose declared pixel count exceeds ``max_pixels`` are skipped with
    their reason. A build without a single sample (every input skipped) raises :class:`NoSamplesError` with the
    reasons; with ``strict=True`` any skipped input or failed sample raises :class:`CorruptgenError` after the build.
    ``family_options`` are the benchmark family's own choices (e.g. ``severities`` for ImageNet-C).
    ``workers``, ``device``, ``batch_size``, ``io_threads`` (decode/encode threads overlapping the corruptions; default
    0 on CPU, 8 with CUDA) and ``engine`` (``local`` or ``ray``, with :class:`RayOptions`) change speed only, never
    the bytes. The build holds ``<out>/<benchmark>/``'s lock: another build there waits ``wait_lock`` seconds, then
    fails; ``force_unlock`` removes the lock object a killed remote build left.
    """
    benchmark = FAMILIES.canonical(benchmark)  # an alias (imagenet_c) builds into the family's own folder
    plan = make_plan(
        benchmark,
        source=source,
        subsets=subsets,
        clean=clean,
        limit=limit,
        image_column=image_column,
        label_column=label_column,
        folder_labels=folder_labels,
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
    given = {"source": source, "subsets": subsets, "clean": clean, "limit": limit, "seed": seed,
             "image_format": image_format, "quality": quality, "shard_size": shard_size, "split": split,
             "preprocess": preprocess, "image_column": image_column, "label_column": label_column,
             "folder_labels": folder_labels, "max_pixels": max_pixels, "max_bytes": max_bytes,
             **family_options}  # fmt: skip
    run = RunOptions(workers=workers, device=device, batch_size=batch_size, io_threads=io_threads, engine=engine,
                     ray=ray, progress=progress)  # fmt: skip
    result = render(plan, join(out, benchmark), run, overwrite=overwrite, wait_lock=wait_lock,
                    force_unlock=force_unlock, invocation=record(benchmark, given),
                    finish=_write_card(card))  # fmt: skip
    counts = result.manifest["counts"]
    if counts["samples"] == 0:
        raise NoSamplesError(_nothing_built(result))
    for name, (same, total) in flag_counts(result.manifest, "stored_unchanged").items():
        if same:  # e.g. an attack that changed nothing, or an ε below one grey level on 8 bits
            print(f"corruptgen: note: subset {name} stores {same} of {total} images identical to their clean twin "
                  "(why: params.unchanged_reason in each sample's json)", file=sys.stderr)  # fmt: skip
    if strict and (counts["skipped_inputs"] or counts["failed_samples"]):
        raise CorruptgenError(f"--strict: {result.summary()}")
    return result


def _nothing_built(result: BuildResult) -> str:
    """One line for a build without a single sample: how many inputs were skipped, and why (reasons grouped)."""
    skipped = result.manifest["skipped"]
    reasons = Counter(re.sub(r" \([^()]*\)$", "", s.get("reason") or "no reason recorded") for s in skipped)
    why = "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common(3))
    more = f"; {len(reasons) - 3} other reasons" if len(reasons) > 3 else ""
    counts = result.manifest["counts"]
    what = f"{counts['skipped_inputs']} of {counted(counts['inputs'], 'input')} skipped"
    what += f", {counted(counts['failed_samples'], 'sample')} failed" if counts["failed_samples"] else ""
    return (f"{result.out_dir}: no samples: {what} ({why or 'no reasons recorded'}{more}); every skip is listed "
            "in its manifest.json 'skipped'")  # fmt: skip


def _write_card(card: bool):
    """Write the dataset card of a finished build, or without ``card`` its `datasets` configs alone (inside its build
    lock)."""

    def finish(result: BuildResult) -> None:
        from .hub.card import refresh_card, write_configs_yaml

        if card:
            written = refresh_card(result.out_dir)
            if written is not None and written.refused:  # what the card's reading of the shards left out
                print(f"corruptgen: note: card: {written.refused}", file=sys.stderr)
        else:
            write_configs_yaml(result.out_dir)

    return finish
