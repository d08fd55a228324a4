"""What a card says about a build's samples: per-config features, class names and Δv values.

A build records the facts of every shard while writing it (:mod:`corruptgen.io.facts`): member suffixes, the json
type of its samples, the largest class index and whether samples name their class. The card merges those; only shards
of builds made before the facts were recorded are read back (every json sample, or the first ``limit`` per config).
Class names are read from the samples of one config only where the samples name their classes and the names are not
ImageNet's (e.g. class folders); Δv values (VCR's measured perceived change) only when their histogram is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..engine.reader import Build
from ..io.facts import JType, parse_signature, unify
from ..quality.coverage import DELTA_V_KEYS, stored_delta_v
from .features import SubsetSchema, scan_subset


@dataclass
class ScanResult:
    """Per-config schemas, the class indices and names read from samples, the largest class index, and Δv values per
    config (when drawn)."""

    schemas: dict[str, SubsetSchema]
    labels: dict[int, str | None] = field(default_factory=dict)
    max_label: int | None = None
    delta_v: dict[str, list[float]] = field(default_factory=dict)


def scan_build(build: Build, *, limit: int | None = None) -> ScanResult:
    """Every config's schema and the build's labels, from the recorded shard facts (shards without facts are read)."""
    records = build.manifest.get("shards") or {}
    result, named, read = ScanResult({}), False, False
    types: dict[str, JType] = {}  # signature -> type: the shards of a config mostly share one
    for name in build.configs():
        schema, unread = SubsetSchema(), []
        for rel in build.shards(name):
            record = records.get(rel) or {}
            facts = record.get("facts")
            if not isinstance(facts, dict) or "json" not in facts:
                unread.append(rel)
                continue
            schema.add_fields(facts.get("fields") or [])
            if facts["json"] not in types:
                types[facts["json"]] = parse_signature(facts["json"])
            schema.json_type = unify(schema.json_type, types[facts["json"]])
            schema.scanned += record.get("samples", 0)
            labels = facts.get("labels")
            if isinstance(labels, dict) and isinstance(labels.get("max"), int):
                result.max_label = max(labels["max"], -1 if result.max_label is None else result.max_label)
                named = named or labels.get("named") is True
        if unread:
            found = scan_subset(unread, limit=limit, on_meta=lambda meta: record_label(meta, result.labels),
                                read=lambda rel, want, name=name: build.shard_samples(name, rel, want))  # fmt: skip
            schema.add_fields(found.fields)
            schema.json_type, schema.scanned = unify(schema.json_type, found.json_type), schema.scanned + found.scanned
            read = True
        result.schemas[name] = schema
    if named and not read and source_kind(build.manifest.get("source") or {}) not in ("imagenet", "skimage"):
        _read_names(build, result)
    if result.labels:
        result.max_label = max(max(result.labels), -1 if result.max_label is None else result.max_label)
    return result


def _read_names(build: Build, result: ScanResult) -> None:
    """Class names from the samples of the first config, until every index up to the largest one has a name."""
    wanted = (result.max_label or 0) + 1
    for _key, fields in build.iter_samples(build.configs()[0], lambda f: f == "json"):
        record_label(build.metadata(fields), result.labels)
        if len(result.labels) == wanted and all(result.labels.values()):
            return


def record_label(meta: dict, labels: dict[int, str | None]) -> None:
    """Note a sample json's class index and name in ``labels`` (index -> name)."""
    label = meta.get("label")
    if isinstance(label, int) and not isinstance(label, bool) and label >= 0:
        labels[label] = labels.get(label) or meta.get("label_name")


def has_delta_v(schema: SubsetSchema) -> bool:
    """Whether the config's samples record a Δv in their ``params``."""
    top = schema.json_type[1] if schema.json_type[0] == "struct" else {}
    params = top.get("params", ("null",))
    return params[0] == "struct" and any(k in params[1] for k in DELTA_V_KEYS)


def delta_v_values(build: Build, scan: ScanResult) -> dict[str, list[float]]:
    """The Δv of every sample of the configs that record one (read from the shards: drawn figures only)."""
    out: dict[str, list[float]] = {}
    for name, schema in scan.schemas.items():
        if not has_delta_v(schema):
            continue
        values = []
        for _key, fields in build.iter_samples(name, lambda f: f == "json"):
            value = stored_delta_v(build.metadata(fields))
            if value is not None:
                values.append(value)
        if values:
            out[name] = values
    return out


# ------------------------------------------------------------------------------------------------------- classes


def source_kind(source: dict[str, Any]) -> str:
    """``skimage`` for the bundled samples, ``imagenet`` for ImageNet-derived sources, else ``unknown``."""
    if source.get("kind") == "samples":
        return "skimage"
    if source.get("layout") in ("imagenet-wnid", "imagenet-val"):
        return "imagenet"
    text = " ".join(str(source.get(k) or "") for k in ("spec", "name", "path", "pattern")).lower()
    return "imagenet" if ("imagenet" in text or "ilsvrc" in text) else "unknown"


@cache
def imagenet_class_names() -> tuple[str, ...]:
    """The 1000 ImageNet class names for a ``ClassLabel`` (made unique), computed once."""
    from ..io.labels import imagenet_names, imagenet_wnids

    return tuple(_unique(imagenet_names(), imagenet_wnids()))


def class_names(
    source: dict[str, Any], labels: dict[int, str | None], max_label: int | None = None
) -> tuple[str, ...] | None:
    """Names of the class indices in ``.cls`` (for a ``ClassLabel``), or None where the label space is not known.

    ImageNet-derived sources, the bundled photos (ImageNet indices) and labels whose recorded names are ImageNet's get
    the 1000 ImageNet class names. Otherwise the label space must be declared by the source (``num_classes``: names as
    the samples record them, ``class_<i>`` for a class no sample names), or be every index from 0 to the largest
    (``max_label``) with its name recorded; a list of names is never sized by a label's value.
    """
    top = max(labels, default=-1) if max_label is None else max_label
    if top < 0 and not source.get("labelled"):
        return None
    if source_kind(source) in ("imagenet", "skimage") or _named_like_imagenet(labels):
        return imagenet_class_names()
    count = source.get("num_classes")
    if isinstance(count, int) and not isinstance(count, bool) and 0 <= top < count:
        names = [labels.get(i) or f"class_{i}" for i in range(count)]
    elif top >= 0 and len(labels) == top + 1 and all(labels.get(i) for i in range(top + 1)):
        names = [labels[i] for i in range(top + 1)]  # 0..n-1, each named
    else:
        return None
    return tuple(_unique(names, [str(i) for i in range(len(names))]))


def _named_like_imagenet(labels: dict[int, str | None]) -> bool:
    """Some recorded name, and every one the ImageNet name of its index."""
    if not any(labels.values()):
        return False
    from ..io.labels import imagenet_names

    imagenet = imagenet_names()
    return all(0 <= i < len(imagenet) and n in (None, imagenet[i]) for i, n in labels.items())


def _unique(names: list[str], ids: list[str]) -> list[str]:
    """Names made unique for a ``ClassLabel``: a name shared by several classes gets its id appended (ImageNet has
    two ``missile`` and two ``sunglasses`` classes: ``missile (n03773504)``, ``missile (n04008634)``)."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [f"{name} ({ident})" if seen[name] > 1 else name for name, ident in zip(names, ids, strict=True)]


def walk_hashes(obj: Any, prefix: str, out: dict[str, set[str]], depth: int = 0) -> None:
    """Collect string values under keys containing ``sha256`` (e.g. a kernel stack checksum); lists are walked with
    their parent's path."""
    if depth > 5:
        return
    if isinstance(obj, list):
        for v in obj:
            walk_hashes(v, prefix, out, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if "sha256" in str(k).lower() and isinstance(v, str):
                out.setdefault(path, set()).add(v)
            else:
                walk_hashes(v, path, out, depth + 1)
