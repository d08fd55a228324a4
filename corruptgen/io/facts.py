"""What a shard holds, recorded while it is written, so the dataset card never reads the samples back.

Each shard record of the manifest gets ``facts``: ``fields`` (the member suffixes, e.g. ``["cls", "json", "png"]``),
``json`` (the JSON type of its sample metadata as a compact signature, see :func:`signature`) and, when its samples
have class labels, ``labels``: the largest class index and whether any sample names its class; when samples record
boolean parameters, ``flags``: per such parameter, the number of samples where it is true (the adversarial family's
``fooled_surrogate`` and ``stored_unchanged``: the card's fooled fraction, the build's note on images stored identical
to their clean twin). Facts depend only on
the shard's own samples, so a shard records the same facts however the build was run (fresh, resumed, incremental).

A JSON type (``JType``) is a tuple: ``("null",)``, ``("bool",)``, ``("int",)``, ``("float",)``, ``("str",)``,
``("json",)`` (no single type), ``("list", T)`` or ``("struct", {name: T})``; :func:`unify` gives the narrowest type
holding values of two types (int + float → float, null + T → T, lists by element).
"""

from __future__ import annotations

import json
import re
from typing import Any

JType = tuple
NULL: JType = ("null",)
JSON: JType = ("json",)
_SCALARS = {bool: ("bool",), int: ("int",), float: ("float",), str: ("str",), type(None): NULL}
_CODES = {"null": "n", "bool": "b", "int": "i", "float": "f", "str": "s", "json": "j"}
_KINDS = {code: (kind,) for kind, code in _CODES.items()}
_BARE_KEY = re.compile(r"[A-Za-z0-9_.\-]+")


def type_of(value: Any) -> JType:
    """The JType of a decoded JSON value."""
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


def signature(t: JType) -> str:
    """A JType as compact text: scalars ``n b i f s j``, ``[T]`` for a list, ``{name:T,...}`` for a struct (fields in
    sorted order, as the sample json stores them; a name outside ``[A-Za-z0-9_.-]`` is written as a JSON string)."""
    kind = t[0]
    if kind == "list":
        return f"[{signature(t[1])}]"
    if kind == "struct":
        parts = (f"{k if _BARE_KEY.fullmatch(k) else json.dumps(k)}:{signature(v)}" for k, v in sorted(t[1].items()))
        return "{" + ",".join(parts) + "}"
    return _CODES[kind]


def parse_signature(text: str) -> JType:
    """The JType :func:`signature` wrote; ``ValueError`` on anything else."""
    t, end = _parse(text, 0)
    if end != len(text):
        raise ValueError(f"trailing text in a type signature at {end}: {text[end : end + 20]!r}")
    return t


def _parse(text: str, i: int) -> tuple[JType, int]:
    head = text[i : i + 1]
    if head in _KINDS:
        return _KINDS[head], i + 1
    if head == "[":
        elem, i = _parse(text, i + 1)
        return ("list", elem), _expect(text, i, "]")
    if head != "{":
        raise ValueError(f"bad type signature at {i}: {text[i : i + 20]!r}")
    fields: dict[str, JType] = {}
    i += 1
    while text[i : i + 1] != "}":
        if text[i : i + 1] == '"':
            key, i = json.JSONDecoder().raw_decode(text, i)
        else:
            match = _BARE_KEY.match(text, i)
            if match is None:
                raise ValueError(f"bad field name in a type signature at {i}")
            key, i = match.group(), match.end()
        fields[key], i = _parse(text, _expect(text, i, ":"))
        if text[i : i + 1] == ",":
            i += 1
    return ("struct", fields), i + 1


def _expect(text: str, i: int, char: str) -> int:
    if text[i : i + 1] != char:
        raise ValueError(f"expected {char!r} in a type signature at {i}")
    return i + 1


class ShardFacts:
    """Accumulates the facts of one shard's samples (``add`` each sample json, ``record`` at commit)."""

    def __init__(self, fixed: dict[str, Any] | None = None) -> None:
        """``fixed``: the members every sample json of the shard shares (typed here, once)."""
        self.type: JType = NULL
        self.max_label: int | None = None
        self.named = False
        self._fixed = fixed or {}
        self._fixed_types = {key: type_of(value) for key, value in self._fixed.items()}
        self.flags: dict[str, int] = {}

    def add(self, values: dict[str, Any]) -> None:
        """One sample json, ``{**fixed, **values}``: ``values`` are the sample's own members."""
        fields = dict(self._fixed_types)
        for key, value in values.items():
            t = _SCALARS.get(type(value))
            fields[key] = t if t is not None else type_of(value)
        self.type = unify(self.type, ("struct", fields))
        params = values.get("params")
        if isinstance(params, dict):
            for key, value in params.items():
                if type(value) is bool:
                    self.flags[key] = self.flags.get(key, 0) + value
        meta = values if "label" in values else {**self._fixed, **values}
        label = meta.get("label")
        if type(label) is int and label >= 0:
            self.max_label = label if self.max_label is None else max(self.max_label, label)
            self.named = self.named or meta.get("label_name") is not None

    def record(self, fields: list[str]) -> dict[str, Any]:
        """The shard record's ``facts``: member suffixes, json type signature and (when labelled) the labels."""
        out: dict[str, Any] = {"fields": list(fields), "json": signature(self.type)}
        if self.max_label is not None:
            out["labels"] = {"max": self.max_label, "named": self.named}
        if self.flags:
            out["flags"] = dict(sorted(self.flags.items()))
        return out


def flag_counts(manifest: dict[str, Any], flag: str) -> dict[str, tuple[int, int]]:
    """``{subset: (samples where params.<flag> is true, samples)}`` from the shard facts of a manifest, for the subsets
    whose every shard recorded the flag."""
    out: dict[str, tuple[int, int]] = {}
    missing: set[str] = set()
    for record in (manifest.get("shards") or {}).values():
        if not isinstance(record, dict) or not record.get("samples"):
            continue
        subset, flags = record.get("subset"), (record.get("facts") or {}).get("flags") or {}
        count = flags.get(flag)
        if not isinstance(subset, str) or not isinstance(count, int):
            missing.add(str(subset))
            continue
        true, total = out.get(subset, (0, 0))
        out[subset] = (true + count, total + int(record["samples"]))
    return {k: v for k, v in out.items() if k not in missing}
