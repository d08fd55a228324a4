"""Benchmark plans: declarative, frozen, hashed to an id that names the build and its manifest.

A plan is source × subsets × preprocessing; a sample's identity is (benchmark, subset, source key).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import CorruptgenError
from ..io.decode import DEFAULT_MAX_BYTES
from .preprocess import Preprocess

#: shard image formats: 8-bit images, or ``npy`` (float32 (H, W, 3) arrays on [0, 1], for float images)
IMAGE_FORMATS = ("jpg", "png", "webp", "npy")
_NAME_OK = set("abcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class SourceSpec:
    """Where the clean images come from (see :func:`corruptgen.io.sources.open_source`).

    ``spec`` is what is opened; the plan records ``recorded`` instead (its local paths relative to the folder the
    command ran in, or their last component: :func:`corruptgen.io.sources.recorded_spec`), so a plan id, a manifest
    and a card never hold an absolute path, and a source given as ``/abs/photos`` or ``photos`` from the same folder
    is the same plan. What the shards were read from is pinned by the shards' source fingerprints instead
    (:mod:`corruptgen.engine.fingerprint`): a different folder recorded alike is rendered again, never taken as built.
    """

    spec: str = "samples"
    image_column: str | None = None
    label_column: str | None = None
    limit: int | None = None
    folder_labels: bool = False  # class folders labelled by their sorted order, whatever their names
    recorded: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise CorruptgenError(f"--limit must be at least 1, got {self.limit}")
        from ..io.sources import recorded_spec

        object.__setattr__(self, "recorded", recorded_spec(self.spec))

    def to_dict(self) -> dict[str, Any]:
        """The source as a plan records it (part of the plan id)."""
        d = {"spec": self.recorded, "image_column": self.image_column, "label_column": self.label_column,
             "limit": self.limit}  # fmt: skip
        if self.folder_labels:  # added later: left out at its default, so plan ids stay the same
            d["folder_labels"] = True
        return d


@dataclass(frozen=True)
class Subset:
    """One output subset: a corruption (``None`` for the clean reference) with fixed settings.

    Attributes:
        name: subset name, also the folder under ``data/`` and the Hub config name ([a-z0-9_]).
        corruption: qualified corruption name (``family/name``), or ``None`` for ``clean``.
        severity: severity level, or ``None`` when the family has none.
        category: category id within the family, or ``None``.
        options: fixed keyword options passed to the corruption (empty for Syn2Nat).
        per_input: samples rendered from each input (each with its own key ``<key>_<j:03d>`` and seed).
    """

    name: str
    corruption: str | None
    severity: int | None = None
    category: int | None = None
    options: tuple[tuple[str, Any], ...] = ()
    per_input: int = 1

    def __post_init__(self) -> None:
        if not self.name or set(self.name) - _NAME_OK:
            raise CorruptgenError(f"subset name {self.name!r} must use only a-z, 0-9 and _")
        if self.per_input < 1:
            raise CorruptgenError(f"samples per input must be at least 1, got {self.per_input}")

    def sample_keys(self, key: str) -> list[str]:
        """The sample keys rendered from the input ``key``."""
        return [key] if self.per_input == 1 else [f"{key}_{j:03d}" for j in range(self.per_input)]


@dataclass(frozen=True)
class Plan:
    """A complete, hashable description of one build."""

    benchmark: str
    source: SourceSpec
    subsets: tuple[Subset, ...]
    preprocess: Preprocess
    seed: int = 0
    shard_size: int = 1000
    image_format: str = "jpg"
    quality: int = 85
    split: str = "test"
    max_pixels: int = 100_000_000
    family_options: tuple[tuple[str, Any], ...] = field(default=())
    max_bytes: int = DEFAULT_MAX_BYTES

    def __post_init__(self) -> None:
        if self.image_format not in IMAGE_FORMATS:
            raise CorruptgenError(f"unknown --format {self.image_format!r}; use one of {', '.join(IMAGE_FORMATS)}")
        if not 1 <= self.quality <= 100:
            raise CorruptgenError(f"--quality must be in 1..100, got {self.quality}")
        if self.shard_size < 1:
            raise CorruptgenError(f"--shard-size must be at least 1, got {self.shard_size}")
        if not self.subsets:
            raise CorruptgenError("the plan has no subsets to build")
        names = [s.name for s in self.subsets]
        if len(set(names)) != len(names):
            raise CorruptgenError(f"duplicate subset names in {names}")
        if not self.split.isidentifier():
            raise CorruptgenError(f"split name {self.split!r} must be a word like test or validation")
        if self.max_pixels < 1:
            raise CorruptgenError("--max-pixels must be positive")
        if self.max_bytes < 1:
            raise CorruptgenError("--max-bytes must be positive")
        if self.preprocess.least_pixels > self.max_pixels:
            least = self.preprocess.least_pixels
            raise CorruptgenError(
                f"preprocessing {self.preprocess.name!r} resizes every image to at least {least} pixels > "
                f"--max-pixels {self.max_pixels}"
            )

    def to_dict(self) -> dict[str, Any]:
        d = _shallow(self)  # asdict would convert every subset twice (a 96-subset plan: 40 ms a call)
        d["source"] = self.source.to_dict()
        d["preprocess"] = self.preprocess.to_dict()
        d["subsets"] = [{**_shallow(s), "options": _recorded(s.options)} for s in self.subsets]
        d["family_options"] = _recorded(self.family_options)
        if self.max_bytes == DEFAULT_MAX_BYTES:  # added later: left out at its default, so plan ids stay the same
            del d["max_bytes"]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        """The plan :meth:`to_dict` wrote (e.g. ``manifest["plan"]``): ``Plan.from_dict(p.to_dict()) == p``, same id.

        Unknown keys (written by a newer corruptgen) fail clearly rather than being dropped.
        """
        try:
            d = dict(data)
            pre = dict(d.pop("preprocess"))
            if pre.get("resize") is not None:
                pre["resize"] = tuple(pre["resize"])
            subsets = tuple(
                Subset(**{**s, "options": tuple((k, _frozen(v)) for k, v in s.get("options", {}).items())})
                for s in d.pop("subsets")
            )
            return cls(
                source=SourceSpec(**d.pop("source")),
                subsets=subsets,
                preprocess=Preprocess(**pre),
                family_options=tuple(sorted((k, _frozen(v)) for k, v in d.pop("family_options", {}).items())),
                **d,
            )
        except (TypeError, KeyError, AttributeError, ValueError) as e:
            raise CorruptgenError(f"not a corruptgen plan ({type(e).__name__}: {e})") from None

    @property
    def plan_id(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of the plan."""
        return digest(self.to_dict())

    def subset(self, name: str) -> Subset:
        for s in self.subsets:
            if s.name == name:
                return s
        raise KeyError(name)


def _shallow(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, in field order, values as they are."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _frozen(value: Any) -> Any:
    """JSON lists back to the tuples a plan holds."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def digest(value: Any) -> str:
    """sha256 (first 16 hex digits) of ``value``'s canonical JSON (sorted keys, no spaces): every id of a build."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


#: plan keys that are not settings: the subsets and the family options that only chose them
NOT_SETTINGS = ("subsets", "family_options")


def settings_id(plan: dict[str, Any]) -> str:
    """sha256 (16 hex digits) of a plan's settings: its canonical JSON without the subsets and the options that only
    chose them."""
    return digest({k: v for k, v in plan.items() if k not in NOT_SETTINGS})


def subset_ids(plan: dict[str, Any]) -> dict[str, str]:
    """Each subset's id: the settings id and the subset's own record, hashed together."""
    common = settings_id(plan)
    return {s["name"]: digest({"settings": common, "subset": s}) for s in plan["subsets"]}


def _recorded(options: Any) -> dict[str, Any]:
    """Options as the plan records them: a local path in a value (a ``torchscript:`` model) relative to the folder
    the command ran in, or its last component (:func:`corruptgen.io.shown.recorded_value`)."""
    from ..io.shown import recorded_value

    return {key: recorded_value(value) for key, value in dict(options).items()}
