"""Declared ``datasets`` features for a build's subsets, from the types of their samples.

`datasets` infers a WebDataset schema from the first 5 samples of the first tar only (its WebDataset builder), and
the ``params`` of a corruption differ per subset and sometimes per sample, so the card declares the features of every
config, in the datasets YAML encoding (§1.3), written without importing `datasets`: jpg/png/webp → ``image``, npy
(float32 (H, W, 3) arrays, which `datasets` decodes itself, never unpickling) → nested lists of ``float32``, cls →
``int64`` (or a ``ClassLabel``), json → ``struct``. The json type is unified over every sample (recorded while
rendering, :mod:`corruptgen.io.facts`, or read here from shards that lack the record): int+float → float64, null+T → T,
lists by element; a value with no single Arrow type (a list mixing numbers and lists, or a field that is a number here
and a string there) is declared ``json`` (datasets' ``Json`` feature). A field that is null in every sample gets its
known type (``label``: int64, ...) or ``json`` (which accepts anything later).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..io.facts import JSON as JSON
from ..io.facts import NULL as NULL
from ..io.facts import JType
from ..io.facts import type_of as type_of
from ..io.facts import unify as unify
from ..io.tarread import iter_samples

#: Fields of every sample json with their type when no scanned sample has a value (engine contract, engine/chunk.py).
KNOWN_FIELDS: dict[str, JType] = {
    "key": ("str",), "source_key": ("str",), "source_id": ("str",), "label_name": ("str",), "benchmark": ("str",),
    "subset": ("str",), "corruption": ("str",), "repeat": ("int",), "label": ("int",), "category": ("int",),
    "severity": ("int",), "seed": ("int",), "frames": ("int",),
}  # fmt: skip

_TEXT_EXTENSIONS = ("txt", "text")
_INT_EXTENSIONS = ("cls", "cls2", "index", "inx", "id")
_JSON_EXTENSIONS = ("json", "jsn")
_COMMON_IMAGES = frozenset({"jpg", "jpeg", "png", "webp"})  # in datasets' list; others are looked up there
_ARRAY_EXTENSIONS = ("npy",)  # float32 (H, W, 3) images on [0, 1] (corruptgen.io.float_images)
_KNOWN_NOT_IMAGES = frozenset(_TEXT_EXTENSIONS + _INT_EXTENSIONS + _JSON_EXTENSIONS + _ARRAY_EXTENSIONS)
#: the declared feature of an ``array`` field: (H, W, 3) float32 as nested lists (any size; `datasets` infers the same)
ARRAY_FEATURE = {"list": {"list": {"list": "float32"}}}
_DTYPES = {"bool": "bool", "int": "int64", "float": "float64", "str": "string"}


def yaml_type(t: JType, default: JType | None = None) -> dict[str, Any]:
    """A JType in the datasets YAML encoding of features (what ``Features._to_yaml_list`` writes, without its name):
    ``{"dtype": "int64"}``, ``{"list": ...}``, ``{"struct": [...]}``. Unknown (all-null) → ``default`` or ``json``
    (datasets' ``Json`` feature); an empty struct → ``json`` (Parquet cannot store a struct without fields)."""
    if t == NULL and default is not None:
        t = default
    kind = t[0]
    if kind == "list":
        inner = yaml_type(t[1])
        if list(inner) == ["dtype"] and isinstance(inner["dtype"], str):
            return {"list": inner["dtype"]}
        return {"list": inner["struct"]} if list(inner) == ["struct"] else {"list": inner}
    if kind == "struct" and t[1]:
        known = KNOWN_FIELDS if default is _TOP else {}
        return {"struct": [{"name": n, **yaml_type(sub, known.get(n))} for n, sub in t[1].items()]}
    return {"dtype": _DTYPES.get(kind, "json")}


_TOP: JType = ("top",)  # marker: the sample json itself, whose known fields get their known types


def _image_extensions() -> set[str]:
    from datasets.packaged_modules.webdataset.webdataset import IMAGE_EXTENSIONS

    return set(IMAGE_EXTENSIONS)


def field_kind(field_name: str) -> str | None:
    """How `datasets`' WebDataset builder reads a member suffix: image, array (``npy``: a float image), int, json,
    text, or None (not declared)."""
    ext = field_name.rsplit(".", 1)[-1].lower()
    if ext in _ARRAY_EXTENSIONS:
        return "array"
    if ext in _COMMON_IMAGES or (ext not in _KNOWN_NOT_IMAGES and ext in _image_extensions()):
        return "image"
    if ext in _INT_EXTENSIONS:
        return "int"
    if ext in _JSON_EXTENSIONS:
        return "json"
    if ext in _TEXT_EXTENSIONS:
        return "text"
    return None


@dataclass
class SubsetSchema:
    """What a scan of one subset's shards found: field kinds (in tar order), the unified json type, counts."""

    fields: dict[str, str] = field(default_factory=dict)
    json_type: JType = NULL
    scanned: int = 0
    undeclared: set[str] = field(default_factory=set)

    def add(self, fields: dict[str, bytes | None] | list[str], meta: dict | None) -> None:
        """Note one scanned sample (its member suffixes and decoded json)."""
        self.scanned += 1
        self.add_fields(fields)
        if meta is not None:
            self.json_type = unify(self.json_type, type_of(meta))

    def add_fields(self, fields: Iterable[str]) -> None:
        for f in fields:
            if f not in self.fields and f not in self.undeclared:
                kind = field_kind(f)
                if kind is None:
                    self.undeclared.add(f)
                else:
                    self.fields[f] = kind

    def yaml_features(self, names: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """The features in the datasets YAML encoding, in the column order `datasets` itself produces (fields, then
        __key__, __url__); with ``names`` (``{"0": name, ...}``) the ``cls`` field is a ``ClassLabel`` (its -1,
        "unknown", stays allowed)."""
        out: list[dict[str, Any]] = []
        for name, kind in self.fields.items():
            if kind == "image":
                out.append({"name": name, "dtype": "image"})
            elif kind == "array":
                out.append({"name": name, **ARRAY_FEATURE})
            elif kind == "int" and name == "cls" and names:
                out.append({"name": name, "dtype": {"class_label": {"names": names}}})
            elif kind in ("int", "text"):
                out.append({"name": name, "dtype": "int64" if kind == "int" else "string"})
            elif kind == "json":
                t = self.json_type if self.json_type[0] == "struct" else ("struct", {})
                out.append({"name": name, **yaml_type(t, _TOP)})
        return [*out, {"name": "__key__", "dtype": "string"}, {"name": "__url__", "dtype": "string"}]

    def features(self, class_names: list[str] | tuple[str, ...] | None = None) -> Any:
        """:meth:`yaml_features` as ``datasets.Features`` (what `datasets` reads from the card)."""
        from datasets import Features

        names = {str(i): n for i, n in enumerate(class_names)} if class_names else None
        return Features._from_yaml_list(self.yaml_features(names))


def scan_subset(
    shard_paths: Iterable[str | Path],
    *,
    limit: int | None = None,
    on_meta: Callable[[dict], None] | None = None,
    read: Callable[..., Iterable[tuple[str, dict[str, bytes | None]]]] = iter_samples,
) -> SubsetSchema:
    """Scan the samples of one subset's shards (all, or the first ``limit`` spread evenly over the shards).

    ``on_meta`` receives every scanned sample json (e.g. to collect Δv values for a histogram in the same pass);
    ``read(shard, want)`` reads a shard (default: the bounded tar reader, which stops at a sample it refuses; a
    build's :meth:`~corruptgen.engine.reader.Build.shard_samples` leaves it out instead).
    """
    paths = list(shard_paths)
    schema = SubsetSchema()
    per_shard = None if limit is None or not paths else max(1, -(-limit // len(paths)))
    for path in paths:
        for n, (_key, fields) in enumerate(read(path, lambda f: field_kind(f) == "json")):
            if per_shard is not None and n >= per_shard:
                break
            meta = None
            for data in fields.values():
                if data is not None:
                    try:
                        meta = json.loads(data)
                    except (ValueError, RecursionError):  # not JSON: typed as nothing
                        meta = None
                    break
            schema.add(fields, meta)
            if on_meta is not None and isinstance(meta, dict):
                on_meta(meta)
    return schema
