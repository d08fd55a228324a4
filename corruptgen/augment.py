"""On-the-fly training augmentation with the registered corruptions (the same functions and options as the builders).

>>> from corruptgen.augment import RandomCorruption
>>> aug = RandomCorruption(family="syn2nat", category=4, seed=0)  # the three lighting corruptions
>>> out = aug(image)  # doctest: +SKIP  (HxWx3 uint8, PIL image, or (3,H,W)/(B,3,H,W) float tensor in [0, 1])

``family`` is a benchmark (``"syn2nat"``, ``"imagenet-c"``, ``"opticsbench-rg"``: its subsets, i.e. exactly the
(corruption, severity, options) the builder renders) or a corruption family of the registry (``"imagenet_c"``:
every registered corruption, with ``severity=`` passed to those that take it). Every call draws from its own
generator seeded from ``(seed, epoch, key)`` or ``(seed, epoch, DataLoader worker, call count)``, so runs are
reproducible and workers do not repeat each other. ``OpticsAugment`` (Müller et al., ICCVW 2023, Algorithm 1) is
re-exported from :mod:`corruptgen.families.opticsbench.augment` when that module is installed; ``Mixup``, ``TLAT`` and
``MTLAT`` (Laugros, PhD thesis 2022, §3.3.2) and ``soft_cross_entropy`` from :mod:`corruptgen.attacks.training`.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import CorruptgenError, UnknownNameError
from .seeding import SeededCalls

__all__ = ["MTLAT", "TLAT", "Mixup", "OpticsAugment", "RandomCorruption", "soft_cross_entropy"]  # noqa: F822 (lazy)
#: adversarial training augmentations (Laugros's thesis §3.3.2), loaded on first use with torch
_TRAINING = ("MTLAT", "TLAT", "Mixup", "soft_cross_entropy")

DEFAULT_SEVERITIES = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Choice:
    """One thing the augmentation can apply: a registered corruption with fixed options."""

    corruption: str  # qualified name, family/name
    severity: int | None
    category: int | None
    options: tuple[tuple[str, Any], ...] = ()


def _severity_levels(corruption: Any) -> list[int] | None:
    """The severities a registered corruption takes as ``severity=`` (declared levels, else 1-5), or None."""
    declared = dict(corruption.params or {})
    levels = declared.get("severity", declared.get("severities"))
    if isinstance(levels, dict):
        levels = list(levels)
    try:
        levels = sorted(int(s) for s in levels) if isinstance(levels, (list, tuple)) and levels else None
    except (TypeError, ValueError):
        levels = None
    try:
        explicit = "severity" in inspect.signature(corruption.fn).parameters
    except (TypeError, ValueError):
        explicit = False
    if levels is not None:
        return levels
    return list(DEFAULT_SEVERITIES) if explicit else None


def _severity_filter(severity: int | Sequence[int] | None) -> set[int] | None:
    if severity is None:
        return None
    if isinstance(severity, (int, np.integer)) and not isinstance(severity, bool):
        return {int(severity)}
    if isinstance(severity, (tuple, list)) and len(severity) == 2 and all(isinstance(s, (int, np.integer))
                                                                           for s in severity):  # fmt: skip
        lo, hi = int(severity[0]), int(severity[1])
        if lo > hi:
            raise CorruptgenError(f"severity range must be (low, high) with low <= high, got {severity!r}")
        return set(range(lo, hi + 1))
    raise CorruptgenError(f"severity must be None, an int or a (low, high) pair, got {severity!r}")


def resolve_choices(
    family: str,
    *,
    category: int | Collection[int] | None = None,
    names: Collection[str] | None = None,
    severity: int | Sequence[int] | None = None,
    options: dict[str, Any] | None = None,
) -> list[Choice]:
    """The (corruption, severity, options) the augmentation draws from, after filtering."""
    from .corruptions import list_corruptions
    from .corruptions.registry import families
    from .family.benchmark import get_benchmark, list_benchmarks

    extra = tuple(sorted((options or {}).items()))
    if family in list_benchmarks():
        bench = get_benchmark(family)
        from .corruptions import get

        choices = [
            Choice(s.corruption, s.severity, s.category if s.category is not None else get(s.corruption).category,
                   tuple(sorted({**dict(s.options), **dict(extra)}.items())))
            for s in bench.subsets.values() if s.corruption is not None and s.name != "clean"
        ]  # fmt: skip
    else:
        fam = family.replace("-", "_")
        if fam not in families():
            known = sorted({*families(), *list_benchmarks()})
            near = difflib.get_close_matches(family, known, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(known)}"
            raise UnknownNameError(f"unknown benchmark or corruption family {family!r}; {hint}")
        choices = []
        for c in list_corruptions(fam):
            if c.name == "clean":
                continue
            available = _severity_levels(c)
            if available is not None:
                wanted = _severity_filter(severity)
                for s in [s for s in available if wanted is None or s in wanted]:
                    opts = tuple(sorted({**dict(extra), "severity": s}.items()))
                    choices.append(Choice(c.qualified_name, s, c.category, opts))
            else:
                choices.append(Choice(c.qualified_name, None, c.category, extra))
    if names is not None:
        names = [names] if isinstance(names, str) else list(names)
        short = {c.corruption.split("/", 1)[1] for c in choices}
        bad = [n for n in names if n.split("/")[-1] not in short]
        if bad:
            near = difflib.get_close_matches(bad[0], sorted(short), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise UnknownNameError(f"unknown corruption {bad[0]!r} in {family}{hint}")
        wanted = {n.split("/")[-1] for n in names}
        choices = [c for c in choices if c.corruption.split("/", 1)[1] in wanted]
    if category is not None:
        cats = {category} if isinstance(category, (int, np.integer)) else set(category)
        choices = [c for c in choices if c.category in cats]
    levels = _severity_filter(severity)
    if levels is not None:
        if not any(c.severity is not None for c in choices):
            raise CorruptgenError(f"{family} corruptions have no severities; leave severity=None")
        choices = [c for c in choices if c.severity in levels]
    if not choices:
        raise CorruptgenError(f"no corruption of {family} matches category={category!r}, names={names!r}, "
                              f"severity={severity!r}")  # fmt: skip
    return choices


class RandomCorruption(SeededCalls):
    """Apply a randomly chosen corruption of a family (uniform over corruptions, then over their severities).

    Args:
        family: a benchmark name (its subsets) or a registry family (its corruptions), see the module docstring.
        category: keep corruptions of this category id (or any of several).
        names: keep these corruptions (short or ``family/name``).
        severity: ``None`` (all levels), a level, or an inclusive ``(low, high)`` range.
        p: probability of corrupting an image (otherwise it is returned unchanged; a read-only array as a writable
            copy, so that ``torch.from_numpy`` takes every result).
        seed: base seed (``None``: fresh entropy, different every run).
        options: extra keyword options passed to every corruption call.

    ``__call__(image, key=None)`` returns an image of the same kind and size (a corruption that changes the size, such
    as ImageNet-P's cropped frames, is resized back, bilinear); :meth:`apply` also returns what was applied.
    With ``key`` (e.g. the sample key) the draw depends only on (seed, epoch, key); otherwise on (seed, epoch,
    DataLoader worker, number of calls in this process). Call :meth:`set_epoch` each epoch for fresh draws with
    non-persistent DataLoader workers.
    """

    def __init__(
        self,
        family: str,
        category: int | Collection[int] | None = None,
        names: Collection[str] | None = None,
        severity: int | Sequence[int] | None = None,
        p: float = 1.0,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        if not 0.0 <= p <= 1.0:
            raise CorruptgenError(f"p must be in [0, 1], got {p}")
        super().__init__(seed)
        self.family = family
        self.p = float(p)
        self.choices = resolve_choices(family, category=category, names=names, severity=severity, options=options)
        self._by_corruption: dict[str, list[Choice]] = {}
        for c in self.choices:
            self._by_corruption.setdefault(c.corruption, []).append(c)
        self._names = list(self._by_corruption)
        self._fns: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (f"RandomCorruption(family={self.family!r}, corruptions={len(self._names)}, "
                f"choices={len(self.choices)}, p={self.p}, seed={self.seed})")  # fmt: skip

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_fns"] = {}  # registered functions may be closures: look them up again after unpickling
        return state

    def _corruption(self, name: str):
        if name not in self._fns:
            from .corruptions import get

            self._fns[name] = get(name)
        return self._fns[name]

    def apply_array(self, image: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
        """Corrupt one HxWx3 uint8 array with ``rng``; returns the array and what was applied."""
        return self._apply_array(image, _Draws(rng))

    def _draws(self, key: Any) -> _Draws:
        """This call's draws; with ``p = 1`` its generator is made only if something draws from it."""
        if self.p == 1.0:
            return _Draws(make=self._generator_later(key))
        return _Draws(self._generator(key))

    def _apply_array(self, image: np.ndarray, draws: _Draws) -> tuple[np.ndarray, dict[str, Any]]:
        if draws.given and draws.generator().random() >= self.p:  # unchanged; a read-only input as a writable copy
            kept = image if image.flags.writeable else image.copy()  # torch.from_numpy warns on read-only arrays
            return kept, {"corruption": None, "severity": None, "params": {}}
        name = self._names[draws.index(len(self._names))]
        options = self._by_corruption[name]
        choice = options[draws.index(len(options))]
        corruption = self._corruption(name)
        out, params = corruption.apply(image, draws.generator() if corruption.random else None, **dict(choice.options))
        if out.ndim == 4:  # a sequence corruption (ImageNet-P): one of its frames
            frame = draws.index(len(out))
            out, params = out[frame], {**params, "frame": frame}
        info = {"corruption": name, "severity": choice.severity, "params": params}
        if out.shape != image.shape:  # e.g. ImageNet-P's cropped frames: back to the input size
            from PIL import Image

            info["resized_from"] = list(out.shape[:2])
            out = np.array(Image.fromarray(out).resize((image.shape[1], image.shape[0]), Image.Resampling.BILINEAR))
        return out, info

    def apply(self, image: Any, key: Any = None) -> tuple[Any, dict[str, Any] | list[dict[str, Any]]]:
        """Corrupt ``image``; returns ``(image, info)`` (a list of infos for a batch)."""
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(image, torch.Tensor):
            return self._apply_tensor(image, key)
        if isinstance(image, np.ndarray):
            arr = _check_array(image)
            return self._apply_array(arr, self._draws(key))
        from PIL import Image

        if isinstance(image, Image.Image):
            out, info = self._apply_array(np.asarray(image.convert("RGB")), self._draws(key))
            return Image.fromarray(out), info
        raise CorruptgenError(f"RandomCorruption takes an HxWx3 uint8 array, a PIL image or a (3,H,W)/(B,3,H,W) "
                              f"tensor, got {type(image).__name__}")  # fmt: skip

    def __call__(self, image: Any, key: Any = None) -> Any:
        return self.apply(image, key)[0]

    def _apply_tensor(self, x: Any, key: Any) -> tuple[Any, Any]:
        import torch

        if x.ndim == 3:
            out, info = self._apply_tensor(x.unsqueeze(0), None if key is None else [key])
            return out[0], info[0]
        if x.ndim != 4 or x.shape[1] != 3:
            raise CorruptgenError(f"expected a (3,H,W) or (B,3,H,W) tensor, got shape {tuple(x.shape)}")
        keys = [None] * len(x) if key is None else list(key)
        if len(keys) != len(x):
            raise CorruptgenError(f"{len(keys)} keys for a batch of {len(x)} images")
        floating = x.is_floating_point()
        if floating:
            arr = (x.detach().float().clamp(0, 1) * 255).round().to(torch.uint8)
        elif x.dtype == torch.uint8:
            arr = x.detach()
        else:
            raise CorruptgenError(f"tensor images must be float in [0, 1] or uint8, got {x.dtype}")
        arr = arr.permute(0, 2, 3, 1).cpu().numpy()
        outs, infos = [], []
        for img, k in zip(arr, keys, strict=True):
            out, info = self._apply_array(np.ascontiguousarray(img), self._draws(k))
            outs.append(out)
            infos.append(info)
        result = torch.from_numpy(np.stack(outs)).permute(0, 3, 1, 2).to(x.device)
        result = result.to(x.dtype).div_(255) if floating else result
        return result.contiguous(), infos


class _Draws:
    """One call's generator: ``rng`` as given, or made on first use by ``make`` (only with ``p = 1``: the made one
    replays the draw that ``p`` takes, always below 1, so every later draw is the given path's). ``integers(1)``
    draws nothing, so a single choice is made without a generator: a corruption that draws nothing (pixelate,
    JPEG, ...) then costs no seeding, as in a build."""

    def __init__(self, rng: np.random.Generator | None = None, make: Any = None) -> None:
        self.given, self._rng, self._make = rng is not None, rng, make

    def generator(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = self._make()
            self._rng.random()  # the draw that p takes
        return self._rng

    def index(self, n: int) -> int:
        """``int(rng.integers(n))``."""
        return int(self.generator().integers(n)) if n > 1 else 0


def _check_array(image: np.ndarray) -> np.ndarray:
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise CorruptgenError(f"expected an HxWx3 uint8 RGB array, got shape {image.shape} and dtype {image.dtype}")
    return image


def __getattr__(name: str) -> Any:
    """Lazily re-export ``OpticsAugment`` from :mod:`corruptgen.families.opticsbench.augment` when it exists, and
    Mixup, TLAT, M-TLAT and ``soft_cross_entropy`` from :mod:`corruptgen.attacks.training`."""
    if name in _TRAINING:
        from .attacks import training

        return getattr(training, name)
    if name == "OpticsAugment":
        import importlib
        import importlib.util

        if importlib.util.find_spec("corruptgen.families.opticsbench.augment") is None:
            raise AttributeError("OpticsAugment is not available: its family folder is not installed")
        return importlib.import_module("corruptgen.families.opticsbench.augment").OpticsAugment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
