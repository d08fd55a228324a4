"""The plan a build executes (:func:`make_plan`), with the default shard size sized to the source."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..family.benchmark import get_benchmark
from ..family.plan import Plan, SourceSpec
from .chunk import source_for

#: The default shard size: ``ceil(inputs / SHARD_TARGET)`` clamped to [SHARD_MIN, SHARD_MAX] source images per shard,
#: so a subset rendered from >= SHARD_TARGET * SHARD_MIN inputs has at least SHARD_TARGET shards (one per DataLoader
#: worker of a typical loader) and tiny subsets are not cut into shards of one or two samples.
SHARD_TARGET, SHARD_MIN, SHARD_MAX = 8, 16, 1000


def default_shard_size(inputs: int) -> int:
    """Source images per shard when ``--shard-size`` is not given (see ``SHARD_TARGET``)."""
    return min(SHARD_MAX, max(SHARD_MIN, math.ceil(inputs / SHARD_TARGET)))


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
    shard_size: int | None = None,
    folder_labels: bool = False,
    **options,
) -> Plan:
    """The plan ``build`` would execute; ``options`` are :class:`~corruptgen.family.plan.Plan` fields or the family's
    own.

    Without ``shard_size`` the source is opened (once per process; the build reuses it) to size the shards with
    :func:`default_shard_size`.
    """
    spec = SourceSpec(spec=source, image_column=image_column, label_column=label_column, limit=limit,
                      folder_labels=folder_labels)  # fmt: skip
    bench = get_benchmark(benchmark)
    if options.get("image_format") is None:  # the family's default format
        options["image_format"] = bench.image_format
    plan = bench.plan(source=spec, subsets=subsets, clean=clean, preprocess=preprocess,
                      shard_size=shard_size or SHARD_MAX, **options)  # fmt: skip
    if shard_size is None:
        plan = dataclasses.replace(plan, shard_size=default_shard_size(len(source_for(plan))))
    return plan
