"""Registry of corruptions: a corruption is a plain function plus declared metadata.

Import registers (like timm's ``@register_model``); :func:`get` is the one door and suggests near names on a miss.
Names are unique within a family; an unqualified name resolves when exactly one family has it, otherwise use
``"family/name"``.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..alloc import tune_allocator
from ..errors import CorruptgenError, UnknownNameError
from ..registry import Registry

Params = dict[str, Any]
#: Per-sample context a corruption may declare (see :attr:`Corruption.context`).
CONTEXT = ("sample_index", "stratum", "label")
ApplyFn = Callable[..., tuple[np.ndarray, Params]]  # fn(image, rng, **options) -> (image, params)

RngLike = np.random.Generator | int | None


def as_generator(rng: RngLike) -> np.random.Generator:
    """Turn an int seed, ``None`` (fresh entropy) or a Generator into a numpy Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


class _NoRandomness:
    """The ``rng`` a corruption declared ``random=False`` receives: drawing from it is a programming error."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"a corruption declared random=False used rng.{name}: declare it random")

    def __repr__(self) -> str:
        return "NO_RANDOMNESS"


NO_RANDOMNESS: Any = _NoRandomness()


@dataclass(frozen=True)
class Corruption:
    """A registered corruption.

    Attributes:
        name: snake_case name, unique within its family.
        family: benchmark family (``"syn2nat"``, ...).
        fn: ``fn(image, rng, **options) -> (corrupted, params)``; ``image`` is HxWx3 uint8 RGB, the output has the
            same dtype and shape; ``options`` are fixed settings (e.g. ``severity=3``) for families that have them;
            ``params`` are the values actually used or drawn (JSON-safe).
        params: the declared parameters / domains (as in the source paper's reference call).
        category: category id within the family, or ``None`` (unassigned).
        cite: the source this corruption follows.
        reference: the reference call it reproduces (e.g. the albumentations 0.5.2 expression).
        fidelity: how it relates to the reference (``"exact"``, ``"port of 0.5.2"``, ...).
        batch_fn: optional batched form ``batch_fn(images, rngs, *, device, **options) -> (images, params_list)`` on an
            (N, H, W, 3) uint8 array with one generator per image; it must give the same result as ``fn`` per image
            (the engine uses it when present and falls back to ``fn`` for a batch that fails).
        group_fn: optional grouped form ``group_fn(images, rngs, strata, **options) -> [(image, params), ...]`` for
            corruptions whose samples are rendered together in groups fixed by the plan (VCR's Δv search): the
            renderer hands it each group of ``group_size(options)`` consecutive samples of a subset (sample number
            ``input index · per_input + repeat``, groups aligned to multiples of the size; the last one may be
            shorter), loading members from outside its chunk when a group straddles one, so a result never depends
            on chunking, batching or workers. ``strata`` holds each sample's ``stratum`` context (or ``None``).
        group_size: the group size for a subset's fixed options (required with ``group_fn``).
        context: the per-sample context the renderer passes besides the options: ``"sample_index"`` (the input's
            position in the source; the batched form gets ``sample_indices``), ``"stratum"`` (``(position,
            count)`` of the sample among its input's repeats) and/or ``"label"`` (the input's class, ``None`` when
            unlabelled; the batched form gets ``labels``).
        check: validates a subset's fixed options (raises ``ValueError``/``CorruptgenError`` naming field, value and
            domain); called when a plan is made, so a bad option fails before anything renders. Without it the
            options are only checked against ``fn``'s keyword parameters.
        random: ``False`` for a corruption that never draws from ``rng`` (pixelate, JPEG, ...): no generator is made
            for it (seeding one costs more than some 32 px corruptions) and ``fn`` gets :data:`NO_RANDOMNESS`.
    """

    name: str
    family: str
    fn: ApplyFn = field(repr=False, compare=False)
    params: Mapping[str, Any] = field(default_factory=dict)
    category: int | None = None
    cite: str = ""
    reference: str = ""
    fidelity: str = ""
    batch_fn: Callable[..., tuple[np.ndarray, list[Params]]] | None = field(default=None, repr=False, compare=False)
    group_fn: Callable[..., list[tuple[np.ndarray, Params]]] | None = field(default=None, repr=False, compare=False)
    group_size: Callable[[Mapping[str, Any]], int] | None = field(default=None, repr=False, compare=False)
    context: tuple[str, ...] = ()
    check: Callable[[Mapping[str, Any]], None] | None = field(default=None, repr=False, compare=False)
    random: bool = True

    def __post_init__(self) -> None:
        unknown = set(self.context) - set(CONTEXT)
        if unknown:
            raise ValueError(f"corruption {self.family}/{self.name}: unknown context {sorted(unknown)}; use {CONTEXT}")
        if (self.group_fn is None) != (self.group_size is None):
            raise ValueError(f"corruption {self.family}/{self.name}: group_fn and group_size come together")

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Raise :class:`CorruptgenError` when ``options`` are not valid fixed options of this corruption."""
        try:
            if self.check is not None:
                self.check(options)
            else:
                inspect.signature(self.fn).bind(None, None, **options)
        except CorruptgenError:
            raise
        except (TypeError, ValueError) as e:
            raise CorruptgenError(f"{self.qualified_name}: bad options {dict(options)}: {e}") from None

    @property
    def qualified_name(self) -> str:
        return f"{self.family}/{self.name}"

    def apply(self, image: np.ndarray, rng: RngLike = None, **options: Any) -> tuple[np.ndarray, Params]:
        """Corrupt ``image`` (HxWx3 uint8 RGB) and return it with the parameters used."""
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            shape = getattr(image, "shape", None)
            dtype = getattr(image, "dtype", type(image).__name__)
            raise ValueError(f"{self.name}: expected an HxWx3 uint8 RGB array, got shape {shape} and dtype {dtype}")
        tune_allocator()  # once per process, as in a build: large temporaries reused, not re-mapped (corruptgen.alloc)
        return self.fn(image, as_generator(rng) if self.random else NO_RANDOMNESS, **options)

    def __call__(self, image: np.ndarray, rng: RngLike = None, **options: Any) -> np.ndarray:
        return self.apply(image, rng, **options)[0]


#: Every corruption under its qualified name ``family/name``; family folders register theirs when imported
#: (every folder of :mod:`corruptgen.families` is imported on the first look-up).
CORRUPTIONS: Registry[Corruption] = Registry("corruption", discover=("corruptgen.families",))


def register(corruption: Corruption) -> Corruption:
    """Add a corruption; a duplicate (family, name) is a programming error."""
    return CORRUPTIONS.register(corruption.qualified_name, corruption)


def families() -> list[str]:
    return sorted({c.family for _, c in CORRUPTIONS.items()})


def list_corruptions(family: str | None = None) -> list[Corruption]:
    """All registered corruptions (of one family), in registration order."""
    every = [c for _, c in CORRUPTIONS.items()]
    if family is None:
        return every
    if family not in families():
        raise UnknownNameError(f"unknown corruption family {family!r}; known: {', '.join(families())}")
    return [c for c in every if c.family == family]


def get(name: str, family: str | None = None) -> Corruption:
    """Look a corruption up by ``name`` (unique across families), ``family/name`` or (``name``, ``family``)."""
    if "/" in name and family is None:
        family, name = name.split("/", 1)
    if family is not None and f"{family}/{name}" in CORRUPTIONS:  # loads that family's folder only
        return CORRUPTIONS.get(f"{family}/{name}")
    every = list_corruptions(family)
    hits = [c for c in every if c.name == name]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        options = ", ".join(c.qualified_name for c in hits)
        raise UnknownNameError(f"corruption name {name!r} is ambiguous; use one of: {options}")
    raise UnknownNameError(_miss_message(name, [c.name for c in every], family))


def _miss_message(name: str, candidates: list[str], family: str | None) -> str:
    where = f" in family {family!r}" if family else ""
    near = difflib.get_close_matches(name, candidates, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else f"; see `corruptgen list {family or ''}`".rstrip()
    return f"unknown corruption {name!r}{where}{hint}"
