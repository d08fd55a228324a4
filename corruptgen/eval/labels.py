"""Label spaces: which classes a build's labels index and which classes a model's outputs index.

Accuracy compares a model's predicted class index with the stored label, which is meaningful only when both index
the same classes. :func:`plan_labels` decides, before any image is scored, and refuses in one line when they differ
or cannot be told apart (``--labels check``, the default); the user states a match (``--labels match``), scores
without labels (``--labels ignore``) or maps the model's classes onto the build's (``--class-map FILE``).

A build's label space comes from its manifest's source and from the label names its samples record (``label_name``
in the sample JSON); how spaces are told apart: :mod:`corruptgen.models.labels`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from ..io.hashing import sha256_file
from ..io.labels import NUM_CLASSES
from ..io.shown import shown_path
from ..models.labels import (
    LabelSpace,
    imagenet_index,
    imagenet_source,
    labels_space,
    model_label_space,
    norm_name,
    same_space,
)
from ..models.loading import EvalModel
from .data import EvalSource, SubsetData, peek_samples

MODES = ("check", "match", "ignore")
#: Samples read from the front of the first shard to learn the build's label names.
PEEK = 256


def build_label_space(src: EvalSource, selected: Sequence[SubsetData]) -> LabelSpace | None:
    """The label space of the selected subsets (``None``: no labels), from the manifest and the first samples."""
    source = (src.manifest or {}).get("source") or {}
    seen: dict[int, str | None] = {}
    if not (source and not source.get("labelled")) and not imagenet_source(source):
        for _, fields in peek_samples(selected[0].files[0], PEEK, ("json", "cls")):
            meta = json.loads(fields["json"]) if fields.get("json") else {}
            label = _int(meta.get("label", fields["cls"].decode(errors="replace") if fields.get("cls") else None))
            if label is not None and label >= 0:
                seen[label] = seen.get(label) or meta.get("label_name")
    return labels_space(source, seen, named_by="the build", where=source.get("spec") or src.spec)


def _int(value: Any) -> int | None:
    try:
        return None if value is None or isinstance(value, bool) else int(str(value).strip())
    except ValueError:
        return None


@dataclass
class ModelLabels:
    """How one model's predictions meet the build's labels: checked, stated to match, ignored or mapped."""

    model: EvalModel
    build: LabelSpace | None
    mode: str
    class_map: Mapping | None = None  # {model class: build class}, as the user gave it
    map_source: dict[str, Any] | None = None
    table: np.ndarray | None = None  # the class map over the model's outputs: build label, -1 where not mapped
    space: LabelSpace | None = None  # the model's, once known
    checked: bool = False

    @property
    def mapped(self) -> bool:
        return self.class_map is not None

    def check(self, outputs: int | None) -> None:
        """Refuse (one line) when the spaces differ, or resolve the class map; a model that does not declare its
        size is checked at its first batch (``outputs``)."""
        if self.checked or self.mode != "check" or self.build is None:
            return
        space = self.space = model_label_space(self.model, outputs)
        if space is None:
            return
        if self.mapped:
            size = outputs or self.model.num_classes or len(space.names or ()) or NUM_CLASSES
            self.table = _class_table(self.class_map, space, size, self.model.name, self.build)
            self.map_source = {**(self.map_source or {}), "mapped_classes": int((self.table >= 0).sum())}
        elif not same_space(self.build, space):
            raise CorruptgenError(
                f"label spaces differ: the build's labels are {self.build.description} but model {self.model.name} "
                f"predicts {space.description}, so its accuracy would be meaningless; if they are the same classes "
                "pass --labels match (Python: labels='match'), to map the model's classes onto the build's pass "
                "--class-map FILE (class_map=), for label-free metrics only --labels ignore (see docs/eval.md)"
            )
        self.checked = True

    def apply(self, classes: np.ndarray) -> np.ndarray:
        """Predicted model classes in the build's label space (unchanged without a class map)."""
        if self.table is None:
            return classes
        inside = (classes >= 0) & (classes < len(self.table))
        return np.where(inside, self.table[np.clip(classes, 0, len(self.table) - 1)], -1)

    def describe(self) -> dict[str, Any]:
        """JSON-safe record for the results file."""
        space = self.space or model_label_space(self.model)
        return {"mode": "class map" if self.mapped else self.mode,
                "build": None if self.build is None else self.build.description,
                "model": None if space is None else space.description, "class_map": self.map_source}  # fmt: skip


def plan_labels(
    src: EvalSource,
    selected: Sequence[SubsetData],
    models: Sequence[EvalModel],
    mode: str = "check",
    class_map: str | os.PathLike | Mapping | None = None,
) -> list[ModelLabels]:
    """One :class:`ModelLabels` per model; models that declare their class count are checked here, up front."""
    if mode not in MODES:
        raise CorruptgenError(f"--labels must be one of {', '.join(MODES)}, got {mode!r}")
    if class_map is not None and mode != "check":
        raise CorruptgenError(f"--class-map and --labels {mode} exclude each other (a class map is checked against "
                              "the build's labels)")  # fmt: skip
    raw, source = (None, None) if class_map is None else read_class_map(class_map)
    build = build_label_space(src, selected) if mode == "check" else None
    if raw is not None and build is None:
        raise CorruptgenError("--class-map: the build has no labels to map onto")
    plans = []
    for model in models:
        plan = ModelLabels(model, build, mode, raw, dict(source or {}))
        plan.check(model.num_classes)
        plans.append(plan)
    return plans


def read_class_map(spec: str | os.PathLike | Mapping) -> tuple[dict, dict[str, Any]]:
    """A class map ``{model class: build class}`` (a JSON object, or a file holding one) and where it came from."""
    if isinstance(spec, Mapping):
        raw, source = dict(spec), {"path": None}
    else:
        path = Path(spec)
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise CorruptgenError(f"--class-map {path}: not a readable JSON file ({type(e).__name__})") from None
        source = {"path": shown_path(path), "sha256": sha256_file(path)}  # results are shared: never an absolute path
    if not isinstance(raw, dict) or not raw:
        raise CorruptgenError("--class-map: expected a JSON object {model class: build class}")
    return raw, source


def _class_table(raw: Mapping, model: LabelSpace, size: int, name: str, build: LabelSpace) -> np.ndarray:
    """The class map over the model's ``size`` outputs: build label per output, -1 where not mapped. Classes are
    indices or names (the model's declared names or, for an ImageNet-1k model, any ImageNet name or wnid; the
    build's recorded names)."""
    table = np.full(size, -1, dtype=np.int64)
    for key, value in raw.items():
        table[_index(key, model, size, f"model {name}")] = _index(value, build, None, "the build")
    return table


def _index(value: Any, space: LabelSpace | None, size: int | None, whose: str) -> int:
    """A class index from an index or a name of ``space``."""
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        index = int(text)
        if index < 0 or (size is not None and index >= size):
            raise CorruptgenError(f"--class-map: class {index} is not one of {whose}'s classes")
        return index
    wanted = norm_name(text)
    if space is not None and space.imagenet:
        found = sorted(imagenet_index().get(wanted, ()))
    else:
        found = [i for i, n in ((space.names or {}) if space else {}).items() if norm_name(n) == wanted]
    if len(found) != 1:
        why = "is ambiguous" if found else "is not a class name"
        raise CorruptgenError(f"--class-map: {text!r} {why} of {whose} (use its index)")
    return found[0]
