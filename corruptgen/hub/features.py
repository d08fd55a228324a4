"""Declared ``datasets`` features for a build's subsets, inferred from the samples themselves.

`datasets` infers a WebDataset schema from the first 5 samples of the first tar only (its WebDataset builder), and
the ``params`` of a corruption differ per subset and sometimes per sample, so the card declares the features of every
config. Types follow the datasets YAML encoding (§1.3): jpg/png/webp → ``image``, cls → ``int64``, json → ``struct``.
Within the json, values are unified over the scanned samples: int+float → float64, null+T → T, lists by element; a
value with no single Arrow type (a list mixing numbers and lists, or a field that is a number here and a string there)
is declared ``json`` (datasets' ``Json`` feature). A field that is null in every scanned sample gets its known type
(``label``: int64, ...) or ``json`` (which accepts anything later).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CorruptgenError
from ..io.tarread import iter_samples

# A JSON value type: ("null",) ("bool",) ("int",) ("float",) ("str",) ("json",) ("list", T) ("struct", {name: T})
JType = tuple
NULL: JType = ("null",)
JSON: JType = ("json",)
_SCALARS = {bool: ("bool",), int: ("int",), float: ("float",), str: ("str",)}

#: Fields of every sample json with their type when no scanned sample has a value (engine contract, chunk.py).
KNOWN_FIELDS: dict[str, JType] = {
    "key": ("str",), "source_key": ("str",), "source_id": ("str",), "label_name": ("str",), "benchmark": ("str",),
    "subset": ("str",), "corruption": ("str",), "repeat": ("int",), "label": ("int",), "category": ("int",),
    "severity": ("int",), "seed": ("int",), "frames": ("int",),
}  # fmt: skip

_TEXT_EXTENSIONS = ("txt", "text")
_INT_EXTENSIONS = ("cls", "cls2", "index", "inx", "id")
_JSON_EXTENSIONS = ("json", "jsn")


def type_of(value: Any) -> JType:
    """The JType of a decoded JSON value."""
    if value is None:
        return NULL
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        return scalar
    if isinstance(value, list):
        elem = NULL
        for item in value:
            elem = unify(elem, type_of(item))
            if elem == JSON:
                break
        return ("list", elem)
    if isinstance(value, dict):
        return ("struct", {k: type_of(v) for k, v in value.items()})
    return JSON


def unify(a: JType, b: JType) -> JType:
    """The narrowest JType holding values of both ``a`` and ``b`` (``json`` when there is none)."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    kinds = {a[0], b[0]}
    if kinds == {"int", "float"}:
        return ("float",)
    if a[0] == b[0] == "list":
        return ("list", unify(a[1], b[1]))
    if a[0] == b[0] == "struct":
        names = sorted({*a[1], *b[1]})
        return ("struct", {n: unify(a[1].get(n, NULL), b[1].get(n, NULL)) for n in names})
    return JSON


def to_feature(t: JType, default: JType | None = None) -> Any:
    """A ``datasets`` feature for a JType. Unknown (all-null) → ``default`` or ``Json``; empty struct → ``Json``."""
    import datasets
    from datasets import List, Value

    Json = getattr(datasets, "Json", None)
    if Json is None:
        raise CorruptgenError(f"declaring features needs a datasets release with the Json feature (installed: "
                              f"{datasets.__version__}); upgrade datasets")  # fmt: skip

    if t == NULL and default is not None:
        t = default
    kind = t[0]
    if kind in ("null", "json"):
        return Json()
    if kind == "list":
        return List(to_feature(t[1]))
    if kind == "struct":
        if not t[1]:  # Parquet (the Hub viewer) cannot store a struct without fields
            return Json()
        return {
            name: to_feature(sub, KNOWN_FIELDS.get(name) if default is _TOP else None) for name, sub in t[1].items()
        }
    return Value({"bool": "bool", "int": "int64", "float": "float64", "str": "string"}[kind])


_TOP: JType = ("top",)  # marker: the sample json itself, whose known fields get their known types


def _image_extensions() -> set[str]:
    from datasets.packaged_modules.webdataset.webdataset import IMAGE_EXTENSIONS

    return set(IMAGE_EXTENSIONS)


def field_kind(field_name: str) -> str | None:
    """How `datasets`' WebDataset builder reads a member suffix: image, int, json, text, or None (not declared)."""
    ext = field_name.rsplit(".", 1)[-1].lower()
    if ext in _image_extensions():
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

    def add(self, fields: dict[str, bytes | None], meta: dict | None) -> None:
        self.scanned += 1
        for f in fields:
            if f not in self.fields and f not in self.undeclared:
                kind = field_kind(f)
                if kind is None:
                    self.undeclared.add(f)
                else:
                    self.fields[f] = kind
        if meta is not None:
            self.json_type = unify(self.json_type, type_of(meta))

    def features(self, class_names: list[str] | None = None) -> Any:
        """``datasets.Features`` in the column order `datasets` itself produces (fields, then __key__, __url__);
        with ``class_names`` the ``cls`` field is a ``ClassLabel`` (its -1, "unknown", stays allowed)."""
        from datasets import ClassLabel, Features, Image, Value

        out: dict[str, Any] = {}
        for name, kind in self.fields.items():
            if kind == "image":
                out[name] = Image()
            elif kind == "int" and name == "cls" and class_names:
                out[name] = ClassLabel(names=list(class_names))
            elif kind == "int":
                out[name] = Value("int64")
            elif kind == "text":
                out[name] = Value("string")
            elif kind == "json":
                t = self.json_type if self.json_type[0] == "struct" else ("struct", {})
                out[name] = to_feature(t, _TOP) if t[1] else to_feature(JSON)
        out["__key__"] = Value("string")
        out["__url__"] = Value("string")
        return Features(out)


def scan_subset(
    shard_paths: Iterable[str | Path],
    *,
    limit: int | None = None,
    on_meta: Callable[[dict], None] | None = None,
) -> SubsetSchema:
    """Scan the samples of one subset's shards (all, or the first ``limit`` spread evenly over the shards).

    ``on_meta`` receives every scanned sample json (e.g. to collect Δv values for a histogram in the same pass).
    """
    paths = list(shard_paths)
    schema = SubsetSchema()
    per_shard = None if limit is None or not paths else max(1, -(-limit // len(paths)))
    for path in paths:
        for n, (_key, fields) in enumerate(iter_samples(path, want=lambda f: field_kind(f) == "json")):
            if per_shard is not None and n >= per_shard:
                break
            meta = None
            for data in fields.values():
                if data is not None:
                    meta = json.loads(data)
                    break
            schema.add(fields, meta)
            if on_meta is not None and isinstance(meta, dict):
                on_meta(meta)
    return schema
