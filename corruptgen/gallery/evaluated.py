"""What ``corruptgen eval`` found on a build, for the gallery: each subset's top-1 accuracy (the results file's
``metrics.subsets``) and, per shown sample, whether the model's top-1 class was right (the predictions Parquet file
the results file names, written next to it unless eval ran with ``--no-predictions``).

A subset's numbers are shown only when the results were computed on the very shards the build holds now (the
sha256 the results file recorded for each shard equals the manifest's); otherwise the gallery says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.reader import Build
from ..errors import CorruptgenError
from .layout import DV_COLUMNS


@dataclass
class Mark:
    """A shown sample's prediction: ``correct`` is ``None`` for an unlabelled sample; a sequence is correct when
    every frame's top-1 class is its label; ``predicted`` is the top-1 class of its last frame."""

    correct: bool | None
    predicted: int
    predicted_name: str | None


@dataclass
class Evaluation:
    """One results file: the model, per-subset top-1 of the subsets that match the build, notes on the rest."""

    model: str
    path: str
    top1: dict[str, float | None]
    notes: list[str] = field(default_factory=list)
    predictions: Any = None
    names: Sequence[str] | None = None

    def marks(self, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Mark]:
        """The marks of the ``(subset, key)`` pairs asked for, in subsets whose results match the build."""
        pred = self.predictions
        wanted = [w for w in wanted if w[0] in self.top1]
        if pred is None or not wanted:
            return {}
        pairs = set(wanted)
        near = np.isin(self._subset_names, [s for s, _ in pairs]) & np.isin(pred.key.astype(str), [k for _, k in pairs])
        found: dict[tuple[str, str], list[int]] = {}
        for r in np.flatnonzero(near):
            pair = (str(pred.subset[r]), str(pred.key[r]))
            if pair in pairs:
                found.setdefault(pair, []).append(int(r))
        out = {}
        for pair, idx in found.items():
            idx = sorted(idx, key=lambda r: int(pred.frame[r]))
            labels, top1 = pred.label[idx], pred.top5[idx, 0]
            correct = None if (labels < 0).any() else bool((top1 == labels).all())
            top = int(top1[-1])
            name = self.names[top] if self.names is not None and 0 <= top < len(self.names) else None
            out[pair] = Mark(correct, top, name)
        return out

    def binned_top1(self, subsets: Sequence[str], column: int) -> float | None:
        """Top-1 accuracy over the labelled samples of ``subsets`` whose Δv falls in Δv column ``column``."""
        pred = self.predictions
        if pred is None:
            return None
        rows = np.isin(self._subset_names, [s for s in subsets if s in self.top1]) & (pred.label >= 0)
        rows &= self._dv_column == column
        return float((pred.top5[rows, 0] == pred.label[rows]).mean()) if rows.any() else None

    # per predictions table, computed once (a gallery asks for every cell of every row)
    @cached_property
    def _subset_names(self) -> np.ndarray:
        return self.predictions.subset.astype(str)

    @cached_property
    def _dv_column(self) -> np.ndarray:
        """Each prediction's Δv column (``-1``: no finite Δv)."""
        dv = self.predictions.delta_v
        finite = np.isfinite(dv)
        index = np.minimum(np.floor(np.where(finite, np.clip(dv, 0, 1), 0) * DV_COLUMNS), DV_COLUMNS - 1)
        return np.where(finite, index, -1)


def load_evaluations(paths: Sequence[str | os.PathLike], build: Build) -> list[Evaluation]:
    """The results files (``corruptgen eval``'s ``results-<model>.json``) of ``build``, checked against it."""
    from ..eval.results import load_results

    out = []
    for path in paths:
        result = load_results(path)
        data = result.get("data") or {}
        if build.benchmark and data.get("benchmark") and data["benchmark"] != build.benchmark:
            raise CorruptgenError(
                f"{path} holds results on a {data['benchmark']} build, not on this {build.benchmark} build"
            )
        model = str((result.get("model") or {}).get("name") or Path(path).stem)
        rows = (result.get("metrics") or {}).get("subsets") or {}
        ev = Evaluation(model, str(path), {})
        recorded = data.get("shards") or {}
        for subset, row in rows.items():
            stale = _stale(build, subset, recorded)
            if stale:
                ev.notes.append(f"{subset}: {stale}, not shown")
            else:
                ev.top1[subset] = row.get("top1")
        _attach_predictions(ev, result, Path(path))
        out.append(ev)
    return out


def _stale(build: Build, subset: str, recorded: dict[str, Any]) -> str | None:
    """Why the results of ``subset`` are not those of the build's shards (``None`` when they are)."""
    if subset not in build.subset_names():
        return "not in this build"
    mine = {rel: (build.manifest.get("shards") or {}).get(rel, {}).get("sha256") for rel in build.shards(subset)}
    theirs = {rel: sha for rel, sha in recorded.items() if rel.split("/")[1:2] == [subset]}
    if not build.manifest or not theirs:
        return None  # nothing recorded to compare with
    if mine != theirs:
        return "evaluated on other shards than the build holds now"
    return None


def _attach_predictions(ev: Evaluation, result: dict[str, Any], path: Path) -> None:
    from ..eval.predictions import Predictions

    name = result.get("predictions")
    if not name:
        ev.notes.append("no per-sample predictions were saved (eval ran with --no-predictions): thumbnails unmarked")
        return
    file = path.parent / name
    if not file.is_file():
        ev.notes.append(f"the predictions file {file} is missing: thumbnails unmarked")
        return
    ev.predictions = Predictions.from_parquet(file)
    if ev.predictions.meta.get("num_classes") == 1000:
        from ..io.labels import imagenet_names

        ev.names = imagenet_names()
