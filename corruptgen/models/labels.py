"""Label spaces: which classes a set of labels, or a model's outputs, index.

A label is a class index, and two indices name the same class only within one label space. Both the evaluator
(accuracy of a model on a build's labels, :mod:`corruptgen.eval.labels`) and the adversarial family (attacks crafted
on a surrogate away from a source's labels) need to know whether two spaces are the same before they compare
indices, and refuse when they differ or cannot be told apart.

A set of labels is ImageNet-1k when its source says so (the bundled photos, ImageNet folders) or when the names it
records are ImageNet's at their indices; other names are a space of their own; no names at all are unnamed indices.
A model's space comes from the class names it declares (``class_names``, or ``corruptgen_config["class_names"]``),
else from its output count: 1000 outputs are taken as ImageNet-1k in the standard (sorted-wnid) order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..io.labels import NUM_CLASSES

#: Source layouts whose labels are ImageNet-1k indices (besides the bundled ``samples`` photos).
IMAGENET_LAYOUTS = ("imagenet-wnid", "imagenet-val")


@dataclass(frozen=True)
class LabelSpace:
    """The classes behind class indices: ImageNet-1k, named classes (index -> name) or unnamed indices."""

    description: str
    imagenet: bool = False
    names: Mapping[int, str] | None = None


IMAGENET_1K = LabelSpace("ImageNet-1k (1000 classes)", imagenet=True)


def norm_name(name: str) -> str:
    """A class name compared without case, underscores or repeated spaces."""
    return " ".join(str(name).replace("_", " ").split()).casefold()


@cache
def imagenet_index() -> dict[str, frozenset[int]]:
    """Every name an ImageNet class goes by -> its indices: the short name (and the card's ``name (wnid)`` form),
    each synonym of its synset, the whole synset string, its wnid."""
    from ..io.labels import imagenet_names, imagenet_synsets, imagenet_wnids

    index: dict[str, set[int]] = {}
    rows = zip(imagenet_names(), imagenet_synsets(), imagenet_wnids(), strict=True)
    for i, (short, synset, wnid) in enumerate(rows):
        for name in (short, f"{short} ({wnid})", synset, wnid, *synset.split(", ")):
            index.setdefault(norm_name(name), set()).add(i)
    return {name: frozenset(found) for name, found in index.items()}


def is_imagenet(names: Mapping[int, str]) -> bool:
    """True when every ``index -> name`` is an ImageNet-1k class at that index."""
    table = imagenet_index()
    return bool(names) and all(i in table.get(norm_name(n), ()) for i, n in names.items())


def named_space(names: Mapping[int, str], what: str) -> LabelSpace:
    shown = ", ".join(names[i] for i in sorted(names)[:4]) + (", …" if len(names) > 4 else "")
    return LabelSpace(f"{what} ({shown})", names=dict(names))


def imagenet_source(source: Mapping[str, Any]) -> bool:
    """True when a source (its ``describe()``) carries ImageNet-1k indices by what it is: the bundled photos,
    ImageNet's class folders or flat validation folder (file lists over them included)."""
    return source.get("kind") == "samples" or source.get("layout") in IMAGENET_LAYOUTS


def labels_space(source: Mapping[str, Any], seen: Mapping[int, str | None], *, named_by: str,
                 where: str) -> LabelSpace | None:  # fmt: skip
    """The label space of labels ``seen`` (class index -> its recorded name or ``None``) from a source described by
    ``source`` (a source's ``describe()``, as a manifest records it); ``None`` when there are no labels.
    ``named_by`` and ``where`` word the description (``classes named by …``, ``unnamed class indices of …``)."""
    if source and not source.get("labelled"):
        return None
    if imagenet_source(source):
        return IMAGENET_1K
    if not seen and not source:
        return None
    named = {i: str(n) for i, n in seen.items() if n and str(n) != str(i)}  # "3" for 3 (ClassLabel(num_classes))
    if named and is_imagenet(named):
        return IMAGENET_1K
    if named:
        return named_space(named, f"classes named by {named_by}, {len(named)} seen")
    span = f", {min(seen)}–{max(seen)} seen" if seen else ""
    return LabelSpace(f"unnamed class indices of {where}{span}")


def model_label_space(model: Any, outputs: int | None = None) -> LabelSpace | None:
    """The label space of a model's outputs (an :class:`~corruptgen.models.EvalModel`; ``None``: not known before
    its first batch, whose ``outputs`` count then tells)."""
    declared = getattr(model.forward, "corruptgen_config", None) or {}
    names = getattr(model.forward, "class_names", None) or declared.get("class_names")
    if names:
        table = {i: str(n) for i, n in enumerate(names)}
        return IMAGENET_1K if len(table) == NUM_CLASSES and is_imagenet(table) else named_space(table, "its classes")
    count = model.num_classes or outputs
    if count is None:
        return None
    if count == NUM_CLASSES:
        return IMAGENET_1K  # 1000 outputs without names: the standard ImageNet-1k order
    return LabelSpace(f"{count} unnamed outputs")


def same_space(labels: LabelSpace, model: LabelSpace) -> bool:
    """True when ``labels`` index the classes ``model`` predicts (unnamed indices are never taken to)."""
    if labels.imagenet or model.imagenet:
        return labels.imagenet and model.imagenet
    if labels.names is None or model.names is None:
        return False
    return all(norm_name(model.names.get(i, "")) == norm_name(n) for i, n in labels.names.items())
